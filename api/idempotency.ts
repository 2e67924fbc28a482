// `Idempotency-Key` on execute routes (SPEC §15 DX-4). A key is scoped to the API key and the
// target (`agent:<id>`, ...) and remembered 24 h with the request's fingerprint and the execution
// it started. A repeat with the same fingerprint attaches to that execution (no second model
// call); a different fingerprint is a 409. The first request claims the key with SET NX before it
// starts anything, so concurrent identical requests start one execution: the others wait for the
// claim to name its execution. A start that fails releases the claim, so the client can retry.
import { createHash, randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { Conflict, InvalidInput, Unavailable } from '../domain/errors';
import type { IdempotencyStore } from '../infra/idempotency-store';
import { principalOf } from './auth';

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
  idempotency: IdempotencyStore;
}

const REMEMBER_MS = 24 * 3600_000;
/** A claim not yet naming its execution expires quickly, so a crashed API does not lock a key. */
const PENDING_TTL_MS = 60_000;
/** How long a repeat waits for a concurrent first request to name its execution. */
const PENDING_WAIT_MS = 30_000;
const POLL_MS = 50;
const VISIBLE = /^[\x21-\x7e]{1,255}$/;

interface Entry {
  fingerprint: string;
  executionId: string | null;
  /** Makes each claim's value unique, so only its owner replaces or releases it. */
  claim: string;
}

/** The request's `Idempotency-Key`, undefined when absent; 400 when malformed. */
function idempotencyKeyOf(req: Request): string | undefined {
  const value = req.header(IDEMPOTENCY_HEADER);
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
 * Runs `start` (which starts an execution and returns its id) unless the request's
 * `Idempotency-Key` already names an execution of the same request for this API key and
 * `target`. Without the header it just runs `start`. A replay sets `Idempotent-Replayed: true`.
 */
export async function withIdempotency(
  deps: IdempotencyDeps,
  req: Request,
  target: string,
  fingerprintParts: readonly unknown[],
  start: () => Promise<string>,
): Promise<{ executionId: string; replayed: boolean }> {
  const key = idempotencyKeyOf(req);
  if (key === undefined) return { executionId: await start(), replayed: false };
  const scoped = `${principalOf(req).keyId}:${target}:${createHash('sha256').update(key).digest('hex')}`;
  const fingerprint = fingerprintOf(fingerprintParts);
  const deadline = Date.now() + PENDING_WAIT_MS;
  for (;;) {
    const mine: Entry = { fingerprint, executionId: null, claim: randomUUID() };
    const claim = JSON.stringify(mine);
    const held = await store(() => deps.idempotency.claim(scoped, claim, PENDING_TTL_MS));
    if (held === null) {
      let executionId: string;
      // A slow start (Temporal retrying, a chain admission waiting on a lock) keeps its claim:
      // a repeat must never find the key free and start a second execution.
      const refresh = setInterval(() => {
        deps.idempotency.replace(scoped, claim, claim, PENDING_TTL_MS).catch(() => undefined);
      }, PENDING_TTL_MS / 3);
      try {
        executionId = await start();
      } catch (err) {
        await deps.idempotency.release(scoped, claim).catch(() => undefined);
        throw err;
      } finally {
        clearInterval(refresh);
      }
      const remembered = JSON.stringify({ ...mine, executionId });
      const kept = await deps.idempotency.replace(scoped, claim, remembered, REMEMBER_MS).catch(() => false);
      // The execution runs either way; only later repeats could miss it.
      if (!kept) req.log.warn({ executionId }, 'idempotency key could not be remembered');
      return { executionId, replayed: false };
    }
    const entry = JSON.parse(held) as Entry;
    if (entry.fingerprint !== fingerprint)
      throw new Conflict(
        `${IDEMPOTENCY_HEADER} ${key} was already used with a different request (body, x-pipeline-id or x-llm-id)`,
      );
    if (entry.executionId) {
      req.res?.set('Idempotent-Replayed', 'true');
      return { executionId: entry.executionId, replayed: true };
    }
    if (Date.now() > deadline)
      throw new Conflict(`${IDEMPOTENCY_HEADER} ${key} is held by a request that is still starting; retry`);
    await sleep(POLL_MS);
  }
}
