// Structured JSON logs (pino). Secrets and content never reach a log line: request logging
// records method, route template, status and ids only, and the redaction list is a backstop.
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
 * workflows, and an `error` as {type, message, stack} (failure details and payloads stay out).
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
      fields.error =
        error instanceof Error
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
