// A scripted fake of the OpenAI Responses API (POST <prefix>/responses, streamed and not) and of the
// Embeddings API (POST <prefix>/embeddings), so tests and local runs exercise the real openai SDK
// against deterministic answers, failures, drops and hangs without a network or an API key. Only
// node:http (and the built-in hash embedder for vectors), so it also runs standalone (scripts/fake-llm.ts).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { hashEmbedding } from '../../infra/hash-embedder';
import { BackgroundResponses, type BackgroundCounts, type FakeBackgroundBehaviour } from './fake-background';
import { handleCompaction } from './fake-compaction';

export type { BackgroundCounts, FakeBackgroundBehaviour };

/**
 * One request's outcome in a `sequence`: answer HTTP `fail`; stream `dropAfterDeltas` deltas then
 * cut the connection; stream `stallAfterDeltas` deltas then go silent with the connection open
 * (until the client gives up); or `'ok'` (answer normally).
 */
export type FakeStep =
  | { fail: number; message?: string; retryAfterSeconds?: number }
  | { dropAfterDeltas: number }
  | { stallAfterDeltas: number }
  | 'ok';

export interface FakeBehaviour {
  /**
   * The n-th request for this model since it was scripted follows `sequence[n]`; requests past its
   * end answer as the rest of the behaviour says. Checked before `failFirst` and `dropAfterDeltas`.
   */
  sequence?: FakeStep[];
  /** Answer text; default: `Echo: <last user message content>`. */
  text?: string;
  /** Delay between deltas in milliseconds (default 0). */
  deltaDelayMs?: number;
  /** Characters per delta (default: words with their leading spaces, e.g. 'Hello', ' world'). */
  chunkSize?: number;
  /** The first `count` requests for this model answer HTTP `status` with an OpenAI error body. */
  failFirst?: { count: number; status: number; message?: string; retryAfterSeconds?: number };
  /**
   * The first `attempts` requests for this model stream `after` deltas then destroy the socket (no
   * response.completed). A non-streaming request counted here has its socket destroyed before any answer.
   */
  dropAfterDeltas?: { attempts: number; after: number };
  /** Send headers + response.created (streaming) or just headers (non-streaming), then nothing more. */
  hang?: boolean;
  /** Never answer at all. */
  hangBeforeHeaders?: boolean;
  /** Default: computed as words of input (instructions + messages) / words of output. */
  usage?: { input_tokens: number; output_tokens: number };
  /** Streams the text, then ends with `response.incomplete` for this reason (not `completed`). */
  incomplete?: 'max_output_tokens' | 'content_filter';
  /**
   * Awaited after the last delta, before the stream's end events (in-process servers only): a
   * test holds a complete answer's end to act in that window.
   */
  beforeEnd?: () => Promise<void>;
  /** Faults of background responses (`background: true, stream: true`; test/fakes/fake-background.ts). */
  background?: FakeBackgroundBehaviour;
}

/** Scripted behaviour of POST /embeddings for one model. */
export interface FakeEmbeddingBehaviour {
  /** Vector dimension answered (default 8; a request's `dimensions` overrides it, as OpenAI does). */
  size?: number;
  /** The first `count` requests for this model answer HTTP `status` with an OpenAI error body. */
  failFirst?: { count: number; status: number; message?: string; retryAfterSeconds?: number };
  /** Answer vectors of this dimension whatever was asked (a misconfigured model). */
  wrongSize?: number;
  /** Answer HTTP 400 (as for an input the model refuses) to every request with an input containing this text. */
  refuseInputContaining?: string;
  /** Wait this long before answering (default 0). */
  delayMs?: number;
  /** List `data` in reverse input order (each item keeps its true `index`), as servers may. */
  reverseOrder?: boolean;
}

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

export interface FakeModelServer {
  /** Base URL to register as an LLM endpoint, e.g. http://127.0.0.1:PORT/v1 */
  url: string;
  port: number;
  /** Behaviour for requests whose body.model === model (merged over the server defaults). */
  script(model: string, behaviour: FakeBehaviour): void;
  /** Clear scripts, counters and recorded requests (the `requests` array is emptied in place). */
  reset(): void;
  /** Every parsed request to the responses endpoint, in arrival order. */
  requests: RecordedRequest[];
  /** Responses requests open now, and the most open at once since the start or `reset()`. */
  readonly open: number;
  readonly mostOpen: number;
  requestsFor(model: string): RecordedRequest[];
  /** Behaviour of POST /embeddings for requests whose body.model === model (over the defaults). */
  scriptEmbeddings(model: string, behaviour: FakeEmbeddingBehaviour): void;
  /**
   * Every parsed request to the embeddings endpoint, in arrival order (kept apart from `requests`, so
   * a test counting model calls is not disturbed by embedding calls to the same server).
   */
  embeddingRequests: RecordedRequest[];
  embeddingRequestsFor(model: string): RecordedRequest[];
  /** Background responses of this model created, resumed and cancelled since the start or `reset()`. */
  backgroundCounts(model: string): BackgroundCounts;
  /** Stop listening and destroy open sockets (hanging requests included). */
  close(): Promise<void>;
}

export interface StartFakeModelServerOptions {
  port?: number;
  host?: string;
  defaults?: FakeBehaviour;
  embeddingDefaults?: FakeEmbeddingBehaviour;
}

interface Usage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

const countWords = (text: string): number => text.split(/\s+/).filter((word) => word.length > 0).length;

/** Text of a message content: a string, or parts such as `{type:'input_text', text}`. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}

function inputMessages(input: unknown): { role: string; text: string }[] {
  if (typeof input === 'string') return [{ role: 'user', text: input }];
  if (!Array.isArray(input)) return [];
  const messages: { role: string; text: string }[] = [];
  for (const item of input) {
    if (isRecord(item) && typeof item.role === 'string') {
      messages.push({ role: item.role, text: contentText(item.content) });
    }
  }
  return messages;
}

function lastUserMessage(input: unknown): string {
  const users = inputMessages(input).filter((message) => message.role === 'user');
  return users[users.length - 1]?.text ?? '';
}

function countInputWords(body: Record<string, unknown>): number {
  const instructions = typeof body.instructions === 'string' ? body.instructions : '';
  return inputMessages(body.input).reduce(
    (sum, message) => sum + countWords(message.text),
    countWords(instructions),
  );
}

/** Split text into deltas whose concatenation is exactly the text. */
export function chunkText(text: string, chunkSize?: number): string[] {
  if (text.length === 0) return [];
  if (chunkSize !== undefined && chunkSize > 0) {
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += chunkSize) chunks.push(text.slice(i, i + chunkSize));
    return chunks;
  }
  return text.match(/\s*\S+|\s+$/g) ?? [text];
}

function errorType(status: number): { type: string; code: string | null } {
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status === 403) return { type: 'invalid_request_error', code: 'unsupported_country_region_territory' };
  if (status >= 500) return { type: 'server_error', code: 'server_error' };
  return { type: 'invalid_request_error', code: null };
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  extra: { param?: string | null; code?: string | null; retryAfterSeconds?: number } = {},
): void {
  const { type, code } = errorType(status);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-request-id': newId('req'),
  };
  if (extra.retryAfterSeconds !== undefined) headers['retry-after'] = String(extra.retryAfterSeconds);
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

function recordOf(req: IncomingMessage, model: string, body: Record<string, unknown>): RecordedRequest {
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

/**
 * The raw vector the fake answers for `text`: the built-in hash embedding (so similar texts are
 * close) scaled by a text-dependent factor, so a client that forgets to normalise is caught.
 */
export function fakeEmbedding(text: string, size: number): number[] {
  const scale = 1 + (text.length % 7);
  return hashEmbedding(text, size).map((value) => value * scale);
}

/** OpenAI's `encoding_format: 'base64'`: little-endian float32 values, base64-encoded. */
function base64Floats(values: number[]): string {
  const buffer = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => buffer.writeFloatLE(value, index * 4));
  return buffer.toString('base64');
}

function formatUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const hostPart = reachable.includes(':') ? `[${reachable}]` : reachable;
  return `http://${hostPart}:${port}/v1`;
}

export function startFakeModelServer(opts: StartFakeModelServerOptions = {}): Promise<FakeModelServer> {
  const host = opts.host ?? '127.0.0.1';
  const defaults: FakeBehaviour = { ...opts.defaults };
  const scripts = new Map<string, FakeBehaviour>();
  const counters = new Map<string, { failed: number; dropped: number; sequenced: number }>();
  const requests: RecordedRequest[] = [];
  let open = 0;
  let mostOpen = 0;
  const embeddingDefaults: FakeEmbeddingBehaviour = { ...opts.embeddingDefaults };
  const embeddingScripts = new Map<string, FakeEmbeddingBehaviour>();
  const embeddingFailures = new Map<string, number>();
  const embeddingRequests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const background = new BackgroundResponses();
  let closing = false;

  const behaviourFor = (model: string): FakeBehaviour => ({ ...defaults, ...scripts.get(model) });
  const countersFor = (model: string): { failed: number; dropped: number; sequenced: number } => {
    let counter = counters.get(model);
    if (!counter) {
      counter = { failed: 0, dropped: 0, sequenced: 0 };
      counters.set(model, counter);
    }
    return counter;
  };

  async function handleEmbeddings(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      sendError(res, 400, 'We could not parse the JSON body of your request.');
      return;
    }
    if (!isRecord(body)) {
      sendError(res, 400, 'The request body must be a JSON object.');
      return;
    }
    const model = typeof body.model === 'string' ? body.model : '';
    const recorded = recordOf(req, model, body);
    embeddingRequests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished && !closing) recorded.aborted = true;
    });
    if (model === '') {
      sendError(res, 400, "Missing required parameter: 'model'.", {
        param: 'model',
        code: 'missing_required_parameter',
      });
      return;
    }
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || input.length === 0 || !input.every((item) => typeof item === 'string')) {
      sendError(res, 400, "'input' must be a string or a non-empty array of strings.", { param: 'input' });
      return;
    }
    const texts = input as string[];
    if (texts.some((text) => text === '')) {
      // As OpenAI does; some other servers accept empty strings.
      sendError(res, 400, "'$.input' is invalid. Please check the API reference.", { param: 'input' });
      return;
    }

    const behaviour: FakeEmbeddingBehaviour = { ...embeddingDefaults, ...embeddingScripts.get(model) };
    if (behaviour.delayMs) {
      // Stop waiting when the client goes (timeout, abort) or the server closes: no stray timers.
      const delayMs = behaviour.delayMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        res.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (res.destroyed || res.writableEnded) return;
    }
    const failed = embeddingFailures.get(model) ?? 0;
    if (behaviour.failFirst && failed < behaviour.failFirst.count) {
      embeddingFailures.set(model, failed + 1);
      const { status, message, retryAfterSeconds } = behaviour.failFirst;
      sendError(res, status, message ?? `Scripted failure ${failed + 1} of ${behaviour.failFirst.count}`, {
        retryAfterSeconds,
      });
      return;
    }

    const refused = behaviour.refuseInputContaining;
    if (refused !== undefined && texts.some((t) => t.includes(refused))) {
      sendError(res, 400, 'This input cannot be embedded');
      return;
    }

    const asked = typeof body.dimensions === 'number' ? body.dimensions : undefined;
    const size = behaviour.wrongSize ?? asked ?? behaviour.size ?? 8;
    const base64 = body.encoding_format === 'base64';
    const data = texts.map((text, index) => {
      const embedding = fakeEmbedding(text, size);
      return { object: 'embedding', index, embedding: base64 ? base64Floats(embedding) : embedding };
    });
    if (behaviour.reverseOrder) data.reverse();
    const tokens = texts.reduce((sum, text) => sum + Math.max(countWords(text), 1), 0);
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': newId('req') });
    res.end(
      JSON.stringify({ object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } }),
    );
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = new URL(req.url ?? '/', 'http://fake').pathname.replace(/\/+$/, '');
    if (req.method === 'POST' && (pathname === '/embeddings' || pathname.endsWith('/embeddings'))) {
      await handleEmbeddings(req, res);
      return;
    }
    if (req.method === 'POST' && pathname.endsWith('/responses/compact'))
      return handleCompaction(req, res, (model, body) => requests.push(recordOf(req, model, body)));
    const stored = /\/responses\/([^/]+)(\/cancel)?$/.exec(pathname);
    if (stored && req.method === (stored[2] ? 'POST' : 'GET')) {
      req.resume();
      const id = decodeURIComponent(stored[1]!);
      if (stored[2]) background.cancel(res, id);
      else background.retrieve(res, id, new URL(req.url ?? '/', 'http://fake').searchParams);
      return;
    }
    if (req.method !== 'POST' || !(pathname === '/responses' || pathname.endsWith('/responses'))) {
      req.resume();
      sendError(res, 404, `Invalid URL (${req.method ?? 'GET'} ${req.url ?? '/'})`);
      return;
    }

    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      sendError(res, 400, 'We could not parse the JSON body of your request.');
      return;
    }
    if (!isRecord(body)) {
      sendError(res, 400, 'The request body must be a JSON object.');
      return;
    }

    const model = typeof body.model === 'string' ? body.model : '';
    const recorded = recordOf(req, model, body);
    requests.push(recorded);
    mostOpen = Math.max(mostOpen, ++open);
    let droppedByServer = false;
    res.on('close', () => {
      open--;
      recorded.closedAt = Date.now();
      if (!res.writableFinished && !droppedByServer && !closing) recorded.aborted = true;
    });

    if (model === '') {
      sendError(res, 400, "Missing required parameter: 'model'.", {
        param: 'model',
        code: 'missing_required_parameter',
      });
      return;
    }

    const behaviour = behaviourFor(model);
    const counter = countersFor(model);

    if (behaviour.hangBeforeHeaders) return;

    const step = behaviour.sequence?.[counter.sequenced++] ?? 'ok';
    if (step !== 'ok' && 'fail' in step) {
      sendError(res, step.fail, step.message ?? `Scripted failure (request ${counter.sequenced})`, {
        retryAfterSeconds: step.retryAfterSeconds,
      });
      return;
    }
    const stallAfter = step !== 'ok' && 'stallAfterDeltas' in step ? step.stallAfterDeltas : undefined;

    if (behaviour.failFirst && counter.failed < behaviour.failFirst.count) {
      counter.failed += 1;
      const { status, message, retryAfterSeconds } = behaviour.failFirst;
      sendError(
        res,
        status,
        message ?? `Scripted failure ${counter.failed} of ${behaviour.failFirst.count}`,
        {
          retryAfterSeconds,
        },
      );
      return;
    }

    let dropAfter: number | undefined =
      step !== 'ok' && 'dropAfterDeltas' in step ? step.dropAfterDeltas : undefined;
    if (
      dropAfter === undefined &&
      behaviour.dropAfterDeltas &&
      counter.dropped < behaviour.dropAfterDeltas.attempts
    ) {
      counter.dropped += 1;
      dropAfter = behaviour.dropAfterDeltas.after;
    }
    const drop = (): void => {
      droppedByServer = true;
      const socket = res.socket;
      if (!socket) {
        res.destroy();
        return;
      }
      // Flush what was written (the deltas), then close mid-body: the client sees a truncated stream.
      socket.end();
      socket.once('finish', () => socket.destroy());
    };

    const text = behaviour.text ?? `Echo: ${lastUserMessage(body.input)}`;
    const usage: Usage = {
      input_tokens: behaviour.usage?.input_tokens ?? countInputWords(body),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: behaviour.usage?.output_tokens ?? countWords(text),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    };
    usage.total_tokens = usage.input_tokens + usage.output_tokens;

    if (body.background === true && body.stream === true) {
      recorded.responseId = background.create(res, {
        model,
        text,
        chunks: chunkText(text, behaviour.chunkSize),
        delayMs: behaviour.deltaDelayMs ?? 0,
        usage: { ...usage },
        behaviour: behaviour.background ?? {},
        markDropped: () => (droppedByServer = true),
      });
      return;
    }

    const responseId = newId('resp');
    const itemId = newId('msg');
    const createdAt = Math.floor(Date.now() / 1000);
    const part = { type: 'output_text', text, annotations: [], logprobs: [] };
    const completedItem = {
      id: itemId,
      type: 'message',
      status: 'completed',
      content: [part],
      role: 'assistant',
    };
    const responseObject = (status: 'in_progress' | 'completed' | 'incomplete'): Record<string, unknown> => ({
      id: responseId,
      object: 'response',
      created_at: createdAt,
      status,
      background: false,
      error: null,
      incomplete_details: status === 'incomplete' ? { reason: behaviour.incomplete } : null,
      instructions: typeof body.instructions === 'string' ? body.instructions : null,
      max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
      metadata: isRecord(body.metadata) ? body.metadata : {},
      model,
      output: status === 'completed' ? [completedItem] : [],
      parallel_tool_calls: true,
      previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
      reasoning: { effort: null, summary: null },
      store: typeof body.store === 'boolean' ? body.store : true,
      temperature: typeof body.temperature === 'number' ? body.temperature : 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: typeof body.top_p === 'number' ? body.top_p : 1,
      truncation: 'disabled',
      usage: status === 'in_progress' ? null : usage,
      user: null,
    });

    if (body.stream !== true) {
      if (dropAfter !== undefined) {
        drop();
        return;
      }
      if (behaviour.hang || stallAfter !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': newId('req') });
        res.flushHeaders();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': newId('req') });
      res.end(JSON.stringify(responseObject('completed')));
      return;
    }

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': newId('req'),
    });
    let sequence = 0;
    const send = (type: string, payload: Record<string, unknown>): boolean => {
      if (res.destroyed) return false;
      const data = JSON.stringify({ type, sequence_number: sequence, ...payload });
      sequence += 1;
      res.write(`event: ${type}\ndata: ${data}\n\n`);
      return true;
    };

    send('response.created', { response: responseObject('in_progress') });
    if (behaviour.hang) return;
    send('response.in_progress', { response: responseObject('in_progress') });
    send('response.output_item.added', {
      output_index: 0,
      item: { id: itemId, type: 'message', status: 'in_progress', content: [], role: 'assistant' },
    });
    const position = { item_id: itemId, output_index: 0, content_index: 0 };
    send('response.content_part.added', { ...position, part: { ...part, text: '' } });

    const chunks = chunkText(text, behaviour.chunkSize);
    const delay = behaviour.deltaDelayMs ?? 0;
    for (const [index, delta] of chunks.entries()) {
      if (dropAfter !== undefined && index >= dropAfter) break;
      if (stallAfter !== undefined && index >= stallAfter) return; // silent; the socket stays open
      if (index > 0 && delay > 0) await sleep(delay);
      if (!send('response.output_text.delta', { ...position, delta, logprobs: [] })) return;
    }
    if (dropAfter !== undefined) {
      // Let the client read the deltas before the connection goes, as on a real network drop.
      await sleep(Math.max(delay, 100));
      drop();
      return;
    }

    if (behaviour.beforeEnd) await behaviour.beforeEnd();
    if (behaviour.incomplete) {
      send('response.incomplete', { response: responseObject('incomplete') });
      res.end();
      return;
    }
    if (!send('response.output_text.done', { ...position, text, logprobs: [] })) return;
    send('response.content_part.done', { ...position, part });
    send('response.output_item.done', { output_index: 0, item: completedItem });
    send('response.completed', { response: responseObject('completed') });
    res.end();
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        sendError(
          res,
          500,
          `Fake model server error: ${error instanceof Error ? error.message : String(error)}`,
        );
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      resolve({
        url: formatUrl(host, port),
        port,
        requests,
        get open() {
          return open;
        },
        get mostOpen() {
          return mostOpen;
        },
        script(model, behaviour) {
          scripts.set(model, behaviour);
          countersFor(model).sequenced = 0;
        },
        reset() {
          background.reset();
          scripts.clear();
          counters.clear();
          requests.length = 0;
          mostOpen = open;
          embeddingScripts.clear();
          embeddingFailures.clear();
          embeddingRequests.length = 0;
        },
        requestsFor(model) {
          return requests.filter((request) => request.model === model);
        },
        embeddingRequests,
        scriptEmbeddings(model, behaviour) {
          embeddingScripts.set(model, behaviour);
        },
        embeddingRequestsFor(model) {
          return embeddingRequests.filter((request) => request.model === model);
        },
        backgroundCounts(model) {
          return background.countsFor(model);
        },
        close() {
          closing = true;
          background.close();
          for (const socket of sockets) socket.destroy();
          return new Promise<void>((done) => {
            server.close(() => done());
          });
        },
      });
    });
  });
}
