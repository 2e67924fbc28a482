// The model activity's statements, repeated while PostgreSQL's connection is lost (a dropped
// connection, a restart, a failover): failing the attempt instead would, once the model is asked,
// ask it again (issue 16, docs/decisions.md).
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import { isDatabaseConnectionLost } from '../infra/connection-errors';
import { FailureType } from '../workflows/contracts';

/** How long a statement is repeated, and the pauses between tries. */
const STORE_FOR_MS = 30_000;
const STORE_PAUSES_MS = [100, 250, 500, 1000, 2000];

/**
 * `statement`, repeated while its database connection is lost, for up to STORE_FOR_MS (the
 * activity heartbeats meanwhile); then, or at once for any other error, an `Infra.Unavailable`
 * failure naming only the error's code (the driver's message carries the statement and its
 * values). Never classified as the model's failure. Stops when the attempt is cancelled or timed
 * out (`signal`): a late write must not replace a newer attempt's.
 */
export async function throughDatabase<T>(
  what: string,
  signal: AbortSignal,
  statement: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + STORE_FOR_MS;
  for (let tries = 0; ; tries++) {
    signal.throwIfAborted();
    try {
      return await statement();
    } catch (err) {
      if (signal.aborted) throw err;
      if (!isDatabaseConnectionLost(err) || Date.now() >= deadline) {
        const { code, name } = (err ?? {}) as { code?: unknown; name?: unknown };
        throw ApplicationFailure.create({
          type: FailureType.InfraUnavailable,
          message: `Could not ${what} (${String(code ?? name ?? 'error')})`,
        });
      }
      await sleep(STORE_PAUSES_MS[Math.min(tries, STORE_PAUSES_MS.length - 1)]!, undefined, { signal });
    }
  }
}
