// Structured JSON logs (pino). Secrets and content never reach a log line: request logging
// records method, route template, status and ids only, and the redaction list is a backstop. A
// database error is logged by its SQLSTATE and statement name only (issue 33): PostgreSQL quotes
// values in its message, detail and context, and those values can be fragment or prompt text.
import { trace } from '@opentelemetry/api';
import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

const REDACTED_PATHS = [
  'req.headers["x-api-key-secret"]',
  'req.headers.authorization',
  'headers["x-api-key-secret"]',
  'headers.authorization',
  '*.api_key',
  '*.apiKey',
  '*.secret',
  '*.password',
];

/** A PostgreSQL error (pg's DatabaseError): a SQLSTATE code and a severity. */
interface DatabaseErrorLike {
  name: string;
  code: string;
  severity: string;
  statement?: string;
  table?: string;
  constraint?: string;
}

const isDatabaseError = (err: unknown): err is DatabaseErrorLike =>
  err instanceof Error &&
  typeof (err as { severity?: unknown }).severity === 'string' &&
  /^[0-9A-Z]{5}$/.test(String((err as { code?: unknown }).code));

/** A database error's fields that name no value: code, statement (db/knex.ts), table, constraint. */
function databaseErrorFields(err: DatabaseErrorLike): Record<string, string> {
  const { table, constraint } = err;
  return {
    type: err.name,
    code: err.code,
    statement: err.statement ?? 'unnamed',
    ...(table ? { table } : {}),
    ...(constraint ? { constraint } : {}),
  };
}

/** pino's `err` serializer: database errors by code and statement, others as pino logs them. */
const serializeError = (err: unknown): unknown =>
  isDatabaseError(err) ? databaseErrorFields(err) : pino.stdSerializers.err(err as Error);

/** An error for a log line that keeps errors short: its message, or a database error's fields. */
export const loggedError = (err: unknown): unknown =>
  isDatabaseError(err) ? databaseErrorFields(err) : err instanceof Error ? err.message : String(err);

/** With tracing on (infra/telemetry.ts), lines written inside a span name its trace and span. */
function traceContext(): Record<string, string> {
  const context = trace.getActiveSpan()?.spanContext();
  return context && trace.isSpanContextValid(context)
    ? { trace_id: context.traceId, span_id: context.spanId }
    : {};
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'agentry' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
      mixin: traceContext,
    },
    destination,
  );
}

const EXECUTION_WORKFLOW = /^execution-([0-9a-f-]{36})$/i;
const PINO_LEVEL: Record<LogLevel, pino.Level> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The Temporal SDK's logger (worker, workflow and activity context logs) as pino lines: the
 * SDK's metadata (workflowId, runId, activityType, attempt...) plus `executionId` for execution
 * workflows, and an `error` as {type, message, stack} (failure details and payloads stay out;
 * a database error as its code and statement).
 */
export function temporalLogger(logger: Logger): TemporalLogger {
  const sdk = logger.child({ component: 'temporal' });
  const log = (level: LogLevel, message: string, meta: LogMetadata = {}): void => {
    const pinoLevel = PINO_LEVEL[level] ?? 'info';
    // The SDK logs every activity's start and end at debug: nothing is built for a dropped line.
    if (!sdk.isLevelEnabled(pinoLevel)) return;
    const { error, ...rest } = meta as LogMetadata & { error?: unknown };
    const fields: Record<string, unknown> = { ...rest };
    const execution = typeof rest.workflowId === 'string' ? EXECUTION_WORKFLOW.exec(rest.workflowId) : null;
    if (execution) fields.executionId = execution[1];
    if (error !== undefined) {
      fields.error = isDatabaseError(error)
        ? databaseErrorFields(error)
        : error instanceof Error
          ? { type: error.name, message: error.message, stack: error.stack }
          : { message: String(error) };
      const type = (error as { type?: unknown }).type;
      if (typeof type === 'string') fields.failureType = type;
    }
    sdk[pinoLevel](fields, message);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
