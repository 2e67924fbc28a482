// Checks of the bad-input fuzz test on one answer: the error shape of the route's family (SPEC §1
// foundation4 `{detail, errors?}`, §12 seed 002 `{success: false, error, details?}`), streams that
// end in a server failure, and whether a body the server accepted met the documented schema.
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { bodyText, type FuzzRequest, type FuzzRoute } from './fuzz-requests';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

const validators = new Map<object, ValidateFunction>();
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
/** Whether the body the server parsed satisfies the route's documented schema. */
export function schemaAccepts(route: FuzzRoute, req: FuzzRequest): boolean | 'unsure' {
  if (req.parses === 'unsure') return 'unsure';
  if (req.parses === 'no') return false;
  let value: unknown;
  try {
    // The server's JSON reader takes an empty body as `{}` and drops a byte order mark; JSON.parse does neither.
    const text = (bodyText(req) ?? '').replace(/^\ufeff/, '');
    value = text === '' ? {} : JSON.parse(text);
  } catch {
    return false;
  }
  if (!value || typeof value !== 'object') return false;
  let fn = validators.get(route.body!);
  if (!fn) validators.set(route.body!, (fn = ajv.compile(route.body!)));
  return fn(value);
}

/** What is wrong with an OpenAI-shaped error body (`/v1/...`), or null. */
function openAiErrorShape(body: any): string | null {
  const error = body.error;
  if (Object.keys(body).join() !== 'error' || !error || typeof error !== 'object')
    return 'not {"error": {...}}';
  if (typeof error.message !== 'string' || error.message === '')
    return 'error.message is not a non-empty string';
  if (typeof error.type !== 'string') return 'error.type is not a string';
  for (const key of ['param', 'code'])
    if (error[key] !== null && typeof error[key] !== 'string') return `error.${key} is not a string or null`;
  return null;
}

/** What is wrong with an error body for the route's family, or null. */
function errorShape(route: FuzzRoute, body: any): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the error body is not a JSON object';
  if (route.family === 'openai') return openAiErrorShape(body);
  const keys = Object.keys(body);
  if (route.family === 'api') {
    const references = body.error === 'Invalid prompt references';
    if (typeof body.error !== 'string') return 'error is not a string';
    if (!(body.success === false || (references && body.success === undefined)))
      return 'success is not false';
    if (keys.some((k) => !['success', 'error', 'details'].includes(k)))
      return `unexpected keys ${keys.join(', ')}`;
    if (body.details !== undefined && !Array.isArray(body.details)) return 'details is not an array';
    return null;
  }
  if (typeof body.detail !== 'string' || body.detail === '') return 'detail is not a non-empty string';
  if (keys.some((k) => k !== 'detail' && k !== 'errors')) return `unexpected keys ${keys.join(', ')}`;
  if (body.errors !== undefined) {
    if (!Array.isArray(body.errors)) return 'errors is not an array';
    if (body.errors.some((e: any) => typeof e?.type !== 'string' || typeof e?.message !== 'string'))
      return 'an errors item lacks type or message';
  }
  return null;
}

/** A streamed 200 must not end with a server-side failure either. */
export function streamFailure(answer: Answer): string | null {
  const type = answer.headers.get('content-type') ?? '';
  const events: any[] = [];
  if (type.includes('ndjson'))
    for (const line of answer.text.split('\n')) if (line.trim()) events.push(JSON.parse(line));
  if (type.includes('event-stream'))
    for (const line of answer.text.split('\n'))
      if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)));
  // A Responses-protocol `error` event names its failure by code (api/responses-events.ts).
  const serverCodes = ['upstream_error', 'service_unavailable', 'server_error'];
  const failed = events.find(
    (e) => e?.type === 'error' && (e.status ?? (e.code && !serverCodes.includes(e.code) ? 400 : 500)) >= 500,
  );
  return failed ? `the stream ended with ${JSON.stringify(failed)}` : null;
}

/** Problems of a 4xx answer: not JSON, the wrong shape, a 401 without its fixed message. */
export function errorProblems(route: FuzzRoute, answer: Answer): string[] {
  if (!(answer.headers.get('content-type') ?? '').includes('application/json'))
    return ['the error is not JSON'];
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return ['the error body does not parse'];
  }
  const shape = errorShape(route, body);
  if (shape) return [`wrong error shape for ${route.family} endpoints: ${shape}`];
  const message =
    route.family === 'openai'
      ? (body as { error: { message: string } }).error.message
      : (body as { detail?: string }).detail;
  if (answer.status === 401 && route.family !== 'api' && message !== 'Invalid API key')
    return ['a 401 that does not say "Invalid API key"'];
  return [];
}
