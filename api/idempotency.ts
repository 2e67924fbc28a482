// `Idempotency-Key` on execute routes (SPEC §15 DX-4). A key is scoped to the API key and the
// target (`agent:<id>`, ...) and remembered 24 h with the request's fingerprint and the execution
// it started. A repeat with the same fingerprint attaches to that execution (no second model
// call); a different fingerprint is a 409. The first request claims the key with SET NX before it
// starts anything, so concurrent identical requests start one execution: the others wait for the
// claim to name its execution. A start that fails releases the claim, so the client can retry.
// The claim names the ids the start will use and carries a lease the start keeps renewing, which
// Redis expires (infra/idempotency-store.ts): a repeat that finds the lease lapsed (the API died
// mid-start, or its renewals did not land) takes the claim over and starts with the same ids,
// which attaches to whatever the first start did or will do (api/start-execution.ts). A start that
// lost its claim so, while alive, attaches too, and never marks the execution failed.
import { createHash, randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { Conflict, InvalidInput, Unavailable } from '../domain/errors';
import type { LeasedIdempotencyStore } from '../infra/idempotency-store';
import { principalOf } from './auth';
import { newExecutionIds, type ExecutionIds } from './start-execution';

const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** For `RouteSpec.headers`: documents the header in /openapi.json. */
export const IDEMPOTENCY_HEADER_SPEC = {
  name: IDEMPOTENCY_HEADER,
  description:
    '1–255 visible ASCII characters. A repeat within 24 h with the same body and x-pipeline-id/x-llm-id ' +
    'attaches to the same execution (response header Idempotent-Replayed: true); a different request ' +
    'with the same key → 409.',
};

export interface IdempotencyDeps {
  idempotency: LeasedIdempotencyStore;
}

const REMEMBER_MS = 24 * 3600_000;
/**
 * How long a start's lease holds without renewal: a repeat finding it lapsed takes the claim over
 * (the start's API died). Renewed every third of it; a start that only stalled is safe to take
 * over too, since both start the same ids.
 */
const LEASE_MS = 6000;
/** How long a repeat waits for a live start to name its execution. */
const PENDING_WAIT_MS = 30_000;
const POLL_MS = 50;
const VISIBLE = /^[\x21-\x7e]{1,255}$/;

interface Entry {
  fingerprint: string;
  executionId: string | null;
  /** Makes each claim's value unique, so only its owner replaces or releases it. */
  claim: string;
  /** While starting: the ids the start uses (its lease is a key of its own, in Redis's clock). */
  ids?: ExecutionIds;
}

/** The request's `Idempotency-Key`, undefined when absent (or no request); 400 when malformed. */
function idempotencyKeyOf(req: Request | null): string | undefined {
  const value = req?.header(IDEMPOTENCY_HEADER);
  if (value === undefined) return undefined;
  if (!VISIBLE.test(value))
    throw new InvalidInput(`Header ${IDEMPOTENCY_HEADER} must be 1–255 visible ASCII characters`);
  return value;
}

/** JSON with object keys sorted at every level: equal values give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** SHA-256 of the canonical JSON of what makes two requests the same (body, header ids). */
const fingerprintOf = (parts: readonly unknown[]): string =>
  createHash('sha256').update(canonicalJson(parts)).digest('hex');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function store<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch {
    throw new Unavailable('Idempotency keys are unavailable: Redis is unreachable');
  }
}

/**
 * Runs `start` (which starts an execution with the ids given and returns its id) unless the
 * request's `Idempotency-Key` already names an execution of the same request for this API key and
 * `target`. Without the header it just runs `start`, as without a request: a WebSocket turn is a
 * message, with no headers of its own. A replay sets `Idempotent-Replayed: true`.
 */
export async function withIdempotency(
  deps: IdempotencyDeps,
  req: Request | null,
  target: string,
  fingerprintParts: readonly unknown[],
  start: (ids: ExecutionIds) => Promise<string>,
): Promise<{ executionId: string; replayed: boolean }> {
  const key = idempotencyKeyOf(req);
  if (key === undefined || req === null)
    return { executionId: await start(newExecutionIds()), replayed: false };
  const scoped = `${principalOf(req).keyId}:${target}:${createHash('sha256').update(key).digest('hex')}`;
  const fingerprint = fingerprintOf(fingerprintParts);
  const deadline = Date.now() + PENDING_WAIT_MS;
  const starting = (ids: ExecutionIds): Entry => ({
    fingerprint,
    executionId: null,
    claim: randomUUID(),
    ids,
  });
  for (;;) {
    const mine = starting(newExecutionIds());
    const held = await store(() =>
      deps.idempotency.claim(scoped, JSON.stringify(mine), REMEMBER_MS, LEASE_MS),
    );
    if (held === null)
      return { executionId: await startHolding(deps, req, scoped, mine, start), replayed: false };
    const entry = JSON.parse(held) as Entry;
    if (entry.fingerprint !== fingerprint)
      throw new Conflict(
        `${IDEMPOTENCY_HEADER} ${key} was already used with a different request (body, x-pipeline-id or x-llm-id)`,
      );
    if (entry.executionId) {
      req.res?.set('Idempotent-Replayed', 'true');
      return { executionId: entry.executionId, replayed: true };
    }
    // Redis decides whether the lease lapsed (the start's API died, or stalled unrenewed): then
    // this request starts the same ids again.
    const { executionId, requestPayloadId } = entry.ids ?? {};
    if (executionId && requestPayloadId) {
      const taken = starting({ executionId, requestPayloadId, again: true });
      const value = JSON.stringify(taken);
      if (await store(() => deps.idempotency.takeOver(scoped, held, value, REMEMBER_MS, LEASE_MS))) {
        req.log.info({ executionId }, 'idempotency claim taken over from a lapsed start');
        req.res?.set('Idempotent-Replayed', 'true');
        return { executionId: await startHolding(deps, req, scoped, taken, start), replayed: true };
      }
    }
    if (Date.now() > deadline)
      throw new Conflict(`${IDEMPOTENCY_HEADER} ${key} is held by a request that is still starting; retry`);
    await sleep(POLL_MS);
  }
}

/**
 * Starts the claim's ids while renewing its lease, then remembers the execution under the key. A
 * start that fails releases the key (the client may retry); only a start that still held it may
 * mark its execution failed (ExecutionIds.relinquish).
 */
async function startHolding(
  deps: IdempotencyDeps,
  req: Request,
  scoped: string,
  claimed: Entry,
  start: (ids: ExecutionIds) => Promise<string>,
): Promise<string> {
  const value = JSON.stringify(claimed);
  // A slow start (Temporal retrying, a chain admission waiting on a lock) keeps its claim. One
  // renewal at a time; a lapsed or taken lease stays so (the taker starts the same ids).
  let renewing = Promise.resolve(true);
  const renew = setInterval(() => {
    renewing = renewing.then((held) =>
      held ? deps.idempotency.renewLease(scoped, value, LEASE_MS).catch(() => true) : false,
    );
  }, LEASE_MS / 3);
  const stopRenewing = async (): Promise<void> => {
    clearInterval(renew);
    await renewing;
  };
  let released: Promise<boolean> | undefined;
  const relinquish = (): Promise<boolean> =>
    (released ??= deps.idempotency.release(scoped, value).catch(() => false));
  let executionId: string;
  try {
    executionId = await start({ ...claimed.ids!, relinquish });
  } catch (err) {
    await stopRenewing();
    await relinquish();
    throw err;
  }
  await stopRenewing();
  const remembered = JSON.stringify({ fingerprint: claimed.fingerprint, executionId, claim: claimed.claim });
  // Taken over meanwhile (this start stalled): the taker starts the same ids and remembers them.
  const kept = await deps.idempotency.replace(scoped, value, remembered, REMEMBER_MS).catch(() => false);
  // The execution runs either way; only later repeats could miss it.
  if (!kept) req.log.warn({ executionId }, 'idempotency key could not be remembered');
  return executionId;
}
