// Structured JSON logs (pino). Secrets and content never reach a log line: request logging
// records method, route template, status and ids only, and the redaction list is a backstop.
import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
  'req.headers["x-api-key-secret"]',
  'req.headers.authorization',
  'headers["x-api-key-secret"]',
  'headers.authorization',
  '*.api_key',
  '*.apiKey',
  '*.secret',
  '*.password',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, base: { service: 'agentry' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    destination,
  );
}
