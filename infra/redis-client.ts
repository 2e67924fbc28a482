// The Redis client (node-redis, `redis` package) every Redis adapter shares: built and connected by
// the composition root, failing fast while Redis is unreachable, and the one place that tells an
// outage from a command Redis refused.
//
// - `disableOfflineQueue`: while the client reconnects, a command fails at once
//   (ClientOfflineError) instead of waiting in node-redis's offline queue for as long as the outage
//   lasts. Requests answer 503; the relay, which must outlast a restart, retries by itself.
// - Commands in flight when the socket dies are rejected, never resent: a caller that retries
//   checks whether its write landed (infra/relay.ts, infra/idempotency-store.ts).
// - node-redis emits 'error' on every failed (re)connect; without a listener Node would crash.
// - A reply awaited longer than REDIS_COMMAND_TIMEOUT_MS counts as an outage (`answered`): a Redis
//   that hangs, or a partition that drops packets, neither answers nor closes the connection, and
//   node-redis's own command timeout stops counting once a command is written, so whatever waited
//   on the reply (a POST after its workflow started) would wait for ever (issue 33).
import {
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  createClient,
  ErrorReply,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
  type RedisClientType,
} from 'redis';
import type { Logger } from './logger';
import { isCertificateError } from './connection-errors';

export type RedisClient = RedisClientType;

/** Wait before reconnect attempt N: quick at first (a restart takes about a second), then 1 s. */
const reconnectDelayMs = (retries: number): number => Math.min(50 * 2 ** retries, 1000);

/** Logs the first error of an outage and the recovery, not every reconnect attempt. */
export function watchConnection(client: RedisClient, logger: Logger, name: string): RedisClient {
  let down = false;
  client.on('error', (err: Error) => {
    if (down) return;
    down = true;
    // The message only: node-redis errors name host and port, never the URL's password.
    logger.warn({ redis: name, err: err.message }, 'Redis connection lost; reconnecting');
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info({ redis: name }, 'Redis connection back');
  });
  return client;
}

/**
 * How long a reply may be awaited: far above any command's time here (well under a millisecond;
 * a relay read of a long answer, a few), so only a Redis that stopped answering, or an event loop
 * stalled as long, reaches it.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 5000;

/**
 * `call`'s reply, or node-redis's TimeoutError (an outage) once it took `ms`: the command may
 * still be applied later, like one whose reply was lost, and callers that retry check for it.
 */
export async function answered<T>(call: Promise<T>, ms = REDIS_COMMAND_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError()), ms);
  });
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a start waits for Redis before it goes on without it (commands answer 503 meanwhile). */
const START_WAIT_MS = 5000;

export async function connectRedis(url: string, logger: Logger, ca?: string): Promise<RedisClient> {
  const client: RedisClient = createClient({
    url,
    name: 'agentry',
    disableOfflineQueue: true,
    socket: { reconnectStrategy: reconnectDelayMs, connectTimeout: 5000, ...(ca ? { ca } : {}) },
  });
  // The client keeps reconnecting by itself: a process started while Redis is down serves
  // (`/readyz` says redis is not ready, Redis-backed requests answer 503) instead of hanging.
  // A certificate that fails verification is a setting to fix: the start fails, naming it.
  let refuse: (err: Error) => void = () => undefined;
  const refused = new Promise<Error>((resolve) => (refuse = resolve));
  const onError = (err: Error): void => {
    if (isCertificateError(err)) refuse(err);
  };
  client.on('error', onError);
  const connected = watchConnection(client, logger, 'main').connect();
  connected.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const waited = await Promise.race([
    connected.then(() => true as const),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), START_WAIT_MS))),
    refused,
  ]);
  clearTimeout(timer);
  client.off('error', onError);
  if (waited instanceof Error) {
    client.destroy();
    throw new Error(
      `REDIS_URL: TLS: the server certificate was not accepted (AGENTRY_REDIS_TLS_CA_PATH, the URL's host): ${waited.message}`,
    );
  }
  if (!waited) logger.warn('Redis is unreachable at start; serving without it until it answers');
  return client;
}

/** Replies Redis gives while it cannot serve yet (loading its AOF, a script running, failover). */
const NOT_READY = /^(LOADING|BUSY|TRYAGAIN|MASTERDOWN)\b/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** Redis unreachable or not ready yet (try again later), as opposed to a command it refused. */
export function isRedisOutage(err: unknown): boolean {
  if (err instanceof ErrorReply) return NOT_READY.test(err.message);
  return (
    err instanceof ClientOfflineError ||
    err instanceof SocketClosedUnexpectedlyError ||
    err instanceof ConnectionTimeoutError ||
    err instanceof SocketTimeoutError ||
    err instanceof TimeoutError ||
    SOCKET_CODES.has(String((err as { code?: unknown } | null)?.code))
  );
}

/** For an HTTP answer: an outage, or a client already closed by a shutdown; both are a 503. */
export const isRedisUnavailable = (err: unknown): boolean =>
  isRedisOutage(err) || err instanceof ClientClosedError;

const RECONNECT_POLL_MS = 250;

/**
 * Runs a Redis call again while Redis is unreachable (node-redis reconnects by itself and fails
 * commands meanwhile) or does not answer, up to `toleranceMs`; a command Redis refused fails at
 * once. `again` tells a retry, which may have to find out whether the lost reply hid an applied
 * write.
 */
export async function outlastingOutage<T>(
  call: (again: boolean) => Promise<T>,
  toleranceMs: number,
): Promise<T> {
  const deadline = Date.now() + toleranceMs;
  for (let again = false; ; again = true) {
    try {
      return await answered(call(again));
    } catch (err) {
      if (!isRedisOutage(err) || Date.now() >= deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_POLL_MS));
    }
  }
}
