// Turns model-server errors into ApplicationFailures with a type from contracts.ts. Temporal
// owns retries (LLM-3): 408, 409, 429, 5xx and network errors are retryable (honouring
// `retry-after`); any other 4xx is not. infra/upstream-errors.ts reads the answer (statuses,
// hint, message) for the embedders too.
import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError, APIError } from 'openai';
import { isRetryableStatus, retryAfterMs, upstreamMessage } from '../infra/upstream-errors';
import { FailureType, type UpstreamFailureDetails } from '../workflows/contracts';

/**
 * `maxRetryDelayMs`: the retry policy's maximum interval. A server's hint beyond it is capped to
 * it (Temporal takes `nextRetryDelay` as given), so an operator's bound holds whatever it asks.
 */
export function classifyModelError(err: unknown, maxRetryDelayMs?: number): ApplicationFailure {
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
    const hinted = retryAfterMs(err.headers);
    const nextRetryDelay =
      hinted !== undefined && maxRetryDelayMs !== undefined ? Math.min(hinted, maxRetryDelayMs) : hinted;
    // The upstream's own message, trimmed; never contains our request or key.
    const details: UpstreamFailureDetails = {
      upstreamStatus: status,
      message: upstreamMessage(err).slice(0, 500),
    };
    const message = `Model server answered ${status}: ${details.message}`;
    if (status === 429) {
      return ApplicationFailure.create({
        type: FailureType.LlmRateLimited,
        message,
        details: [details],
        nextRetryDelay,
      });
    }
    if (isRetryableStatus(status)) {
      return ApplicationFailure.create({
        type: FailureType.LlmServerError,
        message,
        details: [details],
        nextRetryDelay,
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
