// How an OpenAI-compatible server's error answer reads, for every client of one (the model call
// in activities/failures.ts, the embedders): which statuses may succeed when retried, the
// server's retry hint, and its own message. Temporal owns retries (STYLE 6): callers only turn
// this reading into their own failure type; none of them retries by itself.
import type { APIError } from 'openai';

const MAX_RETRY_AFTER_MS = 60_000;

/** 408, 409, 429 and 5xx may be answered otherwise later; any other 4xx will not. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The upstream's retry hint in milliseconds: `retry-after-ms`, else `retry-after` in seconds or
 * as an HTTP date, capped at 60 s. None (the retry policy's backoff applies) when absent or not
 * positive; a `retry-after-ms` that is not positive yields to `retry-after`, as in the openai SDK.
 */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms > 0) return Math.min(ms, MAX_RETRY_AFTER_MS);
  const raw = headers?.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  const delay = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(raw) - Date.now();
  return Number.isFinite(delay) && delay > 0 ? Math.min(delay, MAX_RETRY_AFTER_MS) : undefined;
}

/**
 * The upstream's own message, untrimmed (callers trim, after removing what must not be shown).
 * Without an OpenAI error body the SDK's message is "<status> <text body>": the status is
 * reported separately, so it is not repeated here.
 */
export function upstreamMessage(err: APIError): string {
  const body = err.error as { message?: unknown } | undefined;
  if (typeof body?.message === 'string') return body.message;
  return (err.message ?? 'no message').replace(new RegExp(`^${err.status} `), '');
}
