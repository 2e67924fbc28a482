// What every endpoint of the fake model server writes and reads on the wire: OpenAI's error
// answers (with `retry-after` in seconds or as an HTTP date), request bodies and records, and the
// server-sent events of a stream as providers write them (OpenAI's `event:` + `data:` with LF, or
// CRLF line ends, `data:` lines only, SSE comments and keep-alive lines), including the faults of a
// connection: a clean end, a cut after what was written, and a cut in the middle of an event.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface RecordedRequest {
  model: string;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  /** True once the client closed the connection before the server finished answering. */
  aborted: boolean;
  /** The client's TCP port (tells which process sent the request). */
  remotePort?: number;
  /** When the request arrived, and when its response finished or was cut off (epoch ms). */
  receivedAt: number;
  closedAt?: number;
  /** The response a background create (`background: true, stream: true`) started. */
  responseId?: string;
}

/** A scripted HTTP failure: the status, its message, and the retry hint it carries. */
export interface FakeFailure {
  /** `retry-after: <seconds>`. */
  retryAfterSeconds?: number;
  /** `retry-after: <HTTP date>`, this many seconds after the answer is sent (IMF-fixdate, whole seconds). */
  retryAfterDateIn?: number;
}

/**
 * How a stream's events are written. Default: OpenAI's (`event: <type>` and `data: <json>`, LF,
 * a blank line after each event).
 */
export interface FakeWire {
  /** CRLF line ends (some proxies and Windows-hosted servers). */
  crlf?: boolean;
  /** `data:` lines only, no `event:` (vLLM, LiteLLM and several proxies): the type is in the JSON. */
  dataOnly?: boolean;
  /** Before every event an SSE comment (`: keep-alive`) and a lone blank line, as proxies send to keep idle connections open. */
  keepAlive?: boolean;
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

export const countWords = (text: string): number =>
  text.split(/\s+/).filter((word) => word.length > 0).length;

function errorType(status: number): { type: string; code: string | null } {
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status === 403) return { type: 'invalid_request_error', code: 'unsupported_country_region_territory' };
  if (status >= 500) return { type: 'server_error', code: 'server_error' };
  return { type: 'invalid_request_error', code: null };
}

/** The `retry-after` header of a scripted failure, if it has one. */
function retryAfterOf(failure: FakeFailure): string | undefined {
  if (failure.retryAfterSeconds !== undefined) return String(failure.retryAfterSeconds);
  if (failure.retryAfterDateIn !== undefined)
    return new Date(Date.now() + failure.retryAfterDateIn * 1000).toUTCString();
  return undefined;
}

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  extra: { param?: string | null; code?: string | null } & FakeFailure = {},
): void {
  const { type, code } = errorType(status);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-request-id': newId('req'),
  };
  const retryAfter = retryAfterOf(extra);
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  res.writeHead(status, headers);
  res.end(
    JSON.stringify({
      error: {
        message,
        type,
        code: extra.code !== undefined ? extra.code : code,
        param: extra.param ?? null,
      },
    }),
  );
}

export function recordOf(
  req: IncomingMessage,
  model: string,
  body: Record<string, unknown>,
): RecordedRequest {
  return {
    model,
    body,
    headers: { ...req.headers },
    aborted: false,
    remotePort: req.socket.remotePort,
    receivedAt: Date.now(),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A request's body, a JSON object; undefined once a 400 saying what is wrong was answered. */
export async function readJsonObject(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<Record<string, unknown> | undefined> {
  let body: unknown;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    return void sendError(res, 400, 'We could not parse the JSON body of your request.');
  }
  if (!isRecord(body)) return void sendError(res, 400, 'The request body must be a JSON object.');
  return body;
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
} as const;

/** Flushes what was written, then closes the connection mid-body: the client sees a broken stream. */
export function cutConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return void res.destroy();
  socket.end();
  socket.once('finish', () => socket.destroy());
}

export interface EventWriter {
  /** Writes the next event (numbered from 0); false once the connection is gone. */
  send(type: string, payload: Record<string, unknown>): boolean;
  /** Writes the first half of the next event's bytes, then destroys the socket. */
  cutMidEvent(type: string, payload: Record<string, unknown>): void;
}

export function eventWriter(res: ServerResponse, wire: FakeWire = {}): EventWriter {
  const nl = wire.crlf ? '\r\n' : '\n';
  let sequence = 0;
  const frame = (type: string, payload: Record<string, unknown>): string => {
    const data = JSON.stringify({ type, sequence_number: sequence++, ...payload });
    const keepAlive = wire.keepAlive ? `: keep-alive${nl}${nl}${nl}` : '';
    return `${keepAlive}${wire.dataOnly ? '' : `event: ${type}${nl}`}data: ${data}${nl}${nl}`;
  };
  return {
    send(type, payload) {
      if (res.destroyed) return false;
      res.write(frame(type, payload));
      return true;
    },
    cutMidEvent(type, payload) {
      const bytes = frame(type, payload);
      res.write(bytes.slice(0, Math.floor(bytes.length / 2)), () => res.socket?.destroy());
    },
  };
}
