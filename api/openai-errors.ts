// Errors of the OpenAI-compatible routes (`/v1/...`, issue 28) in OpenAI's shape,
// `{"error": {"message", "type", "param", "code"}}`, with the statuses of SPEC §1, §9.2 and §9.4,
// so that an SDK raises the exception class of the status (BadRequestError, AuthenticationError,
// NotFoundError...) carrying our message. The SDKs retry 409, 429 and 5xx by themselves: an
// answer they must not repeat says so with `x-should-retry: false` (see `shouldNotRetry`).
import type { Response } from 'express';
import type { ErrorItem } from '../domain/errors';

interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** OpenAI's error `type` of a status (its API answers these for the same statuses). */
function typeOf(status: number): string {
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** A stable `code` per status where the body has nothing more precise. */
const CODES: Record<number, string> = {
  401: 'invalid_api_key',
  403: 'insufficient_permissions',
  404: 'not_found',
  409: 'conflict',
  410: 'answer_expired',
  413: 'request_too_large',
  429: 'rate_limit_exceeded',
  499: 'cancelled',
  502: 'upstream_error',
  503: 'service_unavailable',
};

/** The first problem's kind, in OpenAI's words where it has some (`missing_required_parameter`). */
const ITEM_CODES: Record<string, string> = {
  required: 'missing_required_parameter',
  additionalProperties: 'unknown_parameter',
  type: 'invalid_type',
  ...Object.fromEntries(
    [
      'enum',
      'const',
      'minimum',
      'maximum',
      'exclusiveMinimum',
      'exclusiveMaximum',
      'minLength',
      'maxLength',
      'minItems',
      'maxItems',
      'maxProperties',
      'pattern',
      'format',
      'propertyNames',
    ].map((keyword) => [keyword, 'invalid_value']),
  ),
};

function openAiError(status: number, message: string, items?: ErrorItem[]): OpenAiErrorBody {
  const first = items?.[0];
  const itemCode = first ? (ITEM_CODES[first.type] ?? first.type) : undefined;
  return {
    error: {
      message,
      type: typeOf(status),
      param: first?.path || null,
      code: (status === 400 ? itemCode : undefined) ?? CODES[status] ?? null,
    },
  };
}

export const EXECUTION_ID_HEADER = 'x-agentry-execution-id';

/**
 * An SDK repeats a create that answered 409, 429 or 5xx. Not when an execution was started (a
 * repeat would start another: the client reads this one with GET /v1/responses/{id}), nor on a
 * 409 (an Idempotency-Key used for another request, a response that cannot be cancelled): the
 * answer would be the same.
 */
const shouldNotRetry = (res: Response, status: number): boolean =>
  status === 409 || (status >= 400 && res.getHeader(EXECUTION_ID_HEADER) !== undefined);

/** Sends an error of a `/v1/...` route; a 503 carries Retry-After (SPEC §1). */
export function sendOpenAiError(res: Response, status: number, message: string, items?: ErrorItem[]): void {
  if (status === 503 && res.getHeader('Retry-After') === undefined) res.set('Retry-After', '5');
  if (shouldNotRetry(res, status)) res.set('x-should-retry', 'false');
  res.status(status).json(openAiError(status, message, items));
}

/** The Open Responses WebSocket mode's error envelope (SPEC OR-5, `WebSocketErrorEvent`). */
export interface WebSocketErrorEvent {
  type: 'error';
  status: number;
  error: { type: string; code: string; message: string; param: string | null };
}

/**
 * A failed WebSocket turn as the one message that ends it: the body an HTTP client would get,
 * inside `{type: "error", status}`, with a `code` even where HTTP's is null (clients dispatch on
 * it, and the envelope requires it).
 */
export function webSocketError(status: number, message: string, items?: ErrorItem[]): WebSocketErrorEvent {
  const { error } = openAiError(status, message, items);
  const code = error.code ?? (status >= 500 ? 'server_error' : 'invalid_request');
  return { type: 'error', status, error: { ...error, code } };
}
