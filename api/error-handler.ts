// The single map from errors to HTTP statuses and bodies (SPEC §1), for plain answers and for a
// streamed execution that fails before its first byte alike (api/execution-response.ts throws
// ExecutionFailed here); a WebSocket turn's error takes the same status (`clientErrorOf`). Internals are masked: an unexpected error is a 500 with a log id, never a
// stack trace.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AgentryError, ExecutionFailed, NotFound, TooManyRequests, Unavailable } from '../domain/errors';
import { isDatabaseConnectionLost } from '../infra/connection-errors';
import { loggedError } from '../infra/logger';
import { isRedisUnavailable } from '../infra/redis-client';
import { isOpenAiPath } from './auth';
import { sendOpenAiError } from './openai-errors';

const STATUS: Record<string, number> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  too_many_requests: 429,
  cancelled: 499,
  upstream_failed: 502,
  unavailable: 503,
};

const statusOf = (err: AgentryError): number =>
  err instanceof ExecutionFailed ? err.status : (STATUS[err.kind] ?? 500);

/** SPEC §1: a 429 and a 503 say when to try again. */
function retryAfterOf(err: AgentryError | undefined, status: number): number | undefined {
  if (err instanceof TooManyRequests || err instanceof Unavailable) return err.retryAfterSeconds;
  return status === 503 ? DEPENDENCY_RETRY_AFTER_S : undefined;
}

const DEPENDENCY_RETRY_AFTER_S = 5;

/** Body-parser errors carry `type`; map them to what a client can act on. */
type ReadError = { type?: string; limit?: number; status?: unknown; expose?: unknown; message?: unknown };

function fromBodyParser(err: ReadError): { status: number; detail: string } | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return { status: 400, detail: 'Request body is not valid JSON' };
    case 'entity.too.large':
      return { status: 413, detail: `Request body exceeds the limit of ${err.limit} bytes` };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { status: 400, detail: 'Request body encoding is not supported (use UTF-8 JSON)' };
    case 'request.aborted':
      return { status: 400, detail: 'Request body was not received completely' };
    default:
      return fromClientHttpError(err);
  }
}

/**
 * Other client errors raised while reading a request are http-errors without a `type`: a body that
 * does not decompress under its Content-Encoding (zlib/brotli errors wrapped in a 400). `expose`
 * marks their message as safe to show; they are the client's fault, never a 500.
 */
function fromClientHttpError(err: ReadError): { status: number; detail: string } | null {
  const status = err.status;
  if (typeof status !== 'number' || status < 400 || status > 499 || err.expose !== true) return null;
  if (status === 400)
    return {
      status,
      detail: 'Request body could not be read: does its Content-Encoding match the bytes sent?',
    };
  return { status, detail: typeof err.message === 'string' && err.message ? err.message : 'Bad request' };
}

/** Beyond a lost database connection: a broken pipe, and PostgreSQL's "too many connections". */
const UNAVAILABLE_CODES = new Set(['EPIPE', '53300']);

/**
 * Errors of our own dependencies (database, Redis, Temporal) that mean "try again later": 503
 * with Retry-After, never a 500 (SPEC §1).
 */
export function isDependencyFailure(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  const name = typeof e.name === 'string' ? e.name : '';
  const message = typeof e.message === 'string' ? e.message : '';
  return (
    UNAVAILABLE_CODES.has(code) ||
    isDatabaseConnectionLost(err) ||
    isRedisUnavailable(err) ||
    (name === 'ServiceError' && /UNAVAILABLE|DEADLINE_EXCEEDED/.test(message)) ||
    name === 'TransportError'
  );
}

/** PostgreSQL rejects some text a JSON string can carry (NUL, invalid encodings): bad input. */
function fromDatabaseInput(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === '22021' || code === '22P05')
    return 'Text contains a character that cannot be stored (e.g. NUL)';
  return null;
}

/**
 * Seed 002's endpoints (`/api/...`) answer every error as `{"success": false, "error", "details"?}`
 * (SPEC §12); the OpenAI-compatible ones (`/v1/...`) in OpenAI's shape (api/openai-errors.ts); the
 * others as `{"detail", "errors"?}` (SPEC §1).
 */
function sendError(
  req: Parameters<ErrorRequestHandler>[1],
  res: Parameters<ErrorRequestHandler>[2],
  status: number,
  message: string,
  err?: AgentryError,
): void {
  const retryAfter = retryAfterOf(err, status);
  if (retryAfter !== undefined) res.set('Retry-After', String(retryAfter));
  if (isOpenAiPath(req.originalUrl)) {
    sendOpenAiError(res, status, message, err?.items);
    return;
  }
  if (req.originalUrl.startsWith('/api/')) {
    const details = err?.details ?? err?.items;
    res.status(status).json({ success: false, error: message, ...(details ? { details } : {}) });
    return;
  }
  res.status(status).json({ detail: message, ...(err?.items ? { errors: err.items } : {}) });
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new NotFound(`Not found: ${req.method} ${req.path}`));
};

/** An error's status and words as the client gets them; `err` when it is one of ours. */
export interface ClientError {
  status: number;
  message: string;
  err?: AgentryError;
}

/**
 * Any error a request or a WebSocket turn raised, as its client gets it: ours by their meaning, a
 * body-parser's, bad text, an unavailable dependency (503); anything else a 500 whose log id is in
 * the one log line it gets.
 */
export function clientErrorOf(err: unknown, log: Logger): ClientError {
  if (err instanceof AgentryError) return { status: statusOf(err), message: err.message, err };
  const parsed = fromBodyParser((err ?? {}) as ReadError);
  if (parsed) return { status: parsed.status, message: parsed.detail };
  const badText = fromDatabaseInput(err);
  if (badText) return { status: 400, message: badText };
  if (isDependencyFailure(err)) {
    log.warn({ err: loggedError(err) }, 'dependency unavailable');
    return { status: 503, message: 'A dependency is unavailable; try again shortly' };
  }
  const logId = randomUUID();
  log.error({ err, logId }, 'unhandled error');
  return { status: 500, message: `Internal server error (log id ${logId})` };
}

export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  if (res.headersSent) {
    req.log.warn({ err: loggedError(err) }, 'error after the response started');
    res.end();
    return;
  }
  // The router could not percent-decode a path segment (`/llms/%E0%A4%A`): that path names no
  // valid id, which SPEC §1 makes a 404, not a 500.
  if (err instanceof URIError) {
    sendError(req, res, 404, `Not found: ${req.method} ${req.originalUrl.split('?')[0]}`);
    return;
  }
  const { status, message, err: ours } = clientErrorOf(err, req.log);
  sendError(req, res, status, message, ours);
};
