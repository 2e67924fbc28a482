// A WebSocket message of /v1/responses (SPEC OR-5) read as the create HTTP takes: one JSON object
// per text message, `type: "response.create"`, the rest the body of POST /v1/responses checked by
// the same schema. The transport's own fields are refused rather than ignored (the specification:
// they MUST NOT be sent): every turn streams its events on the socket and is followed there, so
// `stream: false` or `background: true` would promise what the socket does not do.
import type { RawData } from 'ws';
import { InvalidInput } from '../domain/errors';
import { createResponseSchema, type ResponsesCreateBody } from './schemas/responses';
import { validate } from './validation';

const TRANSPORT_FIELDS = ['stream', 'stream_options', 'background'] as const;

const invalid = (type: string, message: string, path?: string): InvalidInput =>
  new InvalidInput(message, [{ type, message, ...(path ? { path } : {}) }]);

const textOf = (data: RawData): string =>
  (Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)).toString(
    'utf8',
  );

/** The create body of a `response.create` message; a 400 naming what is wrong otherwise. */
export function createBodyOf(data: RawData, isBinary: boolean): ResponsesCreateBody {
  if (isBinary)
    throw invalid(
      'unsupported_message',
      'Binary messages are not read: send each response.create event as JSON in a text message',
    );
  let event: unknown;
  try {
    event = JSON.parse(textOf(data));
  } catch {
    throw invalid(
      'invalid_json',
      'The message is not valid JSON: send one response.create event per message',
    );
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event))
    throw invalid('invalid_json', 'The message must be a JSON object: a response.create event');
  const { type, ...body } = event as Record<string, unknown>;
  if (type === undefined)
    throw invalid('required', 'Missing required field: type (a client sends "response.create")', 'type');
  if (type !== 'response.create')
    throw invalid(
      'invalid_value',
      `Unknown event type ${JSON.stringify(type)}: a client sends "response.create"`,
      'type',
    );
  const given = TRANSPORT_FIELDS.find((field) => body[field] !== undefined);
  if (given)
    throw invalid(
      'unsupported_parameter',
      `${given} is not sent in WebSocket mode: every turn streams its events on the socket`,
      given,
    );
  return validate<ResponsesCreateBody>(createResponseSchema, body, 'The response.create event');
}
