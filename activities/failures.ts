// Turns model-server errors into ApplicationFailures with a type from contracts.ts. Temporal
// owns retries (LLM-3): 408, 409, 429, 5xx and network errors are retryable (honouring
// `retry-after`); any other 4xx is not.
import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError, APIError } from 'openai';
import { FailureType, type UpstreamFailureDetails } from '../workflows/contracts';

const MAX_RETRY_AFTER_MS = 60_000;

/** The upstream's retry hint; none (the policy's backoff applies) when absent or not positive. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = parseRetryAfter(headers);
  return ms !== undefined && ms > 0 ? ms : undefined;
}

function parseRetryAfter(headers: Headers | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.min(Number(ms), MAX_RETRY_AFTER_MS);
  const raw = headers?.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(date - Date.now(), 0), MAX_RETRY_AFTER_MS);
}

/** The upstream's own message, trimmed; never contains our request or key. */
function upstreamMessage(err: APIError): string {
  const body = err.error as { message?: unknown } | undefined;
  // Without an OpenAI error body the SDK's message is "<status> <text body>": the status is
  // reported separately (upstreamStatus), so it is not repeated here.
  const message =
    typeof body?.message === 'string'
      ? body.message
      : (err.message ?? 'no message').replace(new RegExp(`^${err.status} `), '');
  return message.slice(0, 500);
}

export function classifyModelError(err: unknown): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof APIConnectionError) {
    const details: UpstreamFailureDetails = { message: 'Model server unreachable or connection lost' };
    return ApplicationFailure.create({
      type: FailureType.LlmUnreachable,
      message: details.message,
      details: [details],
    });
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    const details: UpstreamFailureDetails = { upstreamStatus: status, message: upstreamMessage(err) };
    const message = `Model server answered ${status}: ${details.message}`;
    if (status === 429) {
      return ApplicationFailure.create({
        type: FailureType.LlmRateLimited,
        message,
        details: [details],
        nextRetryDelay: retryAfterMs(err.headers),
      });
    }
    if (status === 408 || status === 409 || status >= 500) {
      return ApplicationFailure.create({
        type: FailureType.LlmServerError,
        message,
        details: [details],
        nextRetryDelay: retryAfterMs(err.headers),
      });
    }
    return ApplicationFailure.create({
      type: FailureType.LlmRejected,
      message,
      details: [details],
      nonRetryable: true,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.create({
    type: FailureType.LlmUnreachable,
    message: `Model call failed: ${message}`,
    details: [{ message }],
  });
}
