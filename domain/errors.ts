// Errors are values with meaning: raised anywhere, mapped to HTTP statuses in exactly one place
// (api/error-handler.ts). They know nothing of HTTP.

export interface ErrorItem {
  type: string;
  path?: string;
  message: string;
  [extra: string]: unknown;
}

export abstract class AgentryError extends Error {
  abstract readonly kind: string;
  /** Seed 002's `details` (reference errors, guardrail reasons), for the `/api/...` error shape. */
  details?: unknown[];
  constructor(
    message: string,
    readonly items?: ErrorItem[],
  ) {
    super(message);
    this.name = new.target.name;
  }

  withDetails(details: unknown[]): this {
    this.details = details;
    return this;
  }
}

export class InvalidInput extends AgentryError {
  readonly kind = 'invalid_input';
}
export class Unauthenticated extends AgentryError {
  readonly kind = 'unauthenticated';
}
export class Forbidden extends AgentryError {
  readonly kind = 'forbidden';
}
export class NotFound extends AgentryError {
  readonly kind = 'not_found';
}
export class Conflict extends AgentryError {
  readonly kind = 'conflict';
}
export class TooManyRequests extends AgentryError {
  readonly kind = 'too_many_requests';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}
/** The model or embedding server failed (after all retries). */
export class UpstreamFailed extends AgentryError {
  readonly kind = 'upstream_failed';
}
/** A dependency of ours (database, Redis, Temporal) is unavailable. */
export class Unavailable extends AgentryError {
  readonly kind = 'unavailable';
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(message);
  }
}
/** The execution was cancelled by a client. */
export class Cancelled extends AgentryError {
  readonly kind = 'cancelled';
}
/**
 * An execution ended in failure (SPEC EX-7): `status` is its outcome, the one its record and its
 * in-band `error` event carry (workflows/contracts `statusForFailure`), answered as is.
 */
export class ExecutionFailed extends AgentryError {
  readonly kind = 'execution_failed';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}
