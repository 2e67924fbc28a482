// A scripted fake of the OpenAI Responses API (POST <prefix>/responses, streamed and not) and of the
// Embeddings API (POST <prefix>/embeddings, test/fakes/fake-embeddings.ts), so tests and local runs
// exercise the real openai SDK against deterministic answers, failures, drops and hangs without a
// network or an API key, and against what OpenAI-compatible servers really put on the wire (issue
// 33: empty deltas, reasoning items, refusals, several items and parts, annotations, CRLF, `data:`
// only, keep-alive comments, mid-stream failures, retry hints as seconds or dates). The events of
// one answer are test/fakes/fake-answer.ts's, their framing test/fakes/fake-wire.ts's. Only
// node:http (and the built-in hash embedder for vectors), so it also runs standalone
// (scripts/fake-llm.ts).
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { answerText, streamAnswer, type StreamFault } from './fake-answer';
import { BackgroundResponses, type BackgroundCounts, type FakeBackgroundBehaviour } from './fake-background';
import { handleCompaction } from './fake-compaction';
import { FakeEmbeddings, fakeEmbedding, type FakeEmbeddingBehaviour } from './fake-embeddings';
import {
  cutConnection,
  eventWriter,
  newId,
  readJsonObject,
  recordOf,
  sendError,
  SSE_HEADERS,
  type FakeWire,
  type RecordedRequest,
} from './fake-wire';
import { responseObjects, shapeOf, stopOf, usageOf, type FakeBehaviour, type FakeStep } from './fake-script';

export type {
  BackgroundCounts,
  FakeBackgroundBehaviour,
  FakeBehaviour,
  FakeEmbeddingBehaviour,
  FakeStep,
  FakeWire,
  RecordedRequest,
  StreamFault,
};
export { chunkText } from './fake-script';
export { fakeEmbedding };

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
  const sockets = new Set<Socket>();
  const background = new BackgroundResponses();
  let closing = false;
  const embeddings = new FakeEmbeddings({ ...opts.embeddingDefaults }, () => closing);

  const behaviourFor = (model: string): FakeBehaviour => ({ ...defaults, ...scripts.get(model) });
  const countersFor = (model: string): { failed: number; dropped: number; sequenced: number } => {
    let counter = counters.get(model);
    if (!counter) {
      counter = { failed: 0, dropped: 0, sequenced: 0 };
      counters.set(model, counter);
    }
    return counter;
  };

  /** Routes the stored-response paths of background mode; true when it answered. */
  function backgroundRoute(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
    const stored = /\/responses\/([^/]+)(\/cancel)?$/.exec(pathname);
    if (!stored || req.method !== (stored[2] ? 'POST' : 'GET')) return false;
    req.resume();
    const id = decodeURIComponent(stored[1]!);
    if (stored[2]) background.cancel(res, id);
    else background.retrieve(res, id, new URL(req.url ?? '/', 'http://fake').searchParams);
    return true;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = new URL(req.url ?? '/', 'http://fake').pathname.replace(/\/+$/, '');
    if (req.method === 'POST' && (pathname === '/embeddings' || pathname.endsWith('/embeddings'))) {
      return embeddings.handle(req, res);
    }
    if (req.method === 'POST' && pathname.endsWith('/responses/compact'))
      return handleCompaction(req, res, (model, body) => requests.push(recordOf(req, model, body)));
    if (backgroundRoute(req, res, pathname)) return;
    if (req.method !== 'POST' || !(pathname === '/responses' || pathname.endsWith('/responses'))) {
      req.resume();
      return sendError(res, 404, `Invalid URL (${req.method ?? 'GET'} ${req.url ?? '/'})`);
    }
    const body = await readJsonObject(req, res);
    if (body) await respond(req, res, body);
  }

  async function respond(
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
  ): Promise<void> {
    const model = typeof body.model === 'string' ? body.model : '';
    const recorded = recordOf(req, model, body);
    requests.push(recorded);
    mostOpen = Math.max(mostOpen, ++open);
    let droppedByServer = false;
    const markDropped = (): void => void (droppedByServer = true);
    res.on('close', () => {
      open--;
      recorded.closedAt = Date.now();
      if (!res.writableFinished && !droppedByServer && !closing) recorded.aborted = true;
    });
    if (model === '') {
      return sendError(res, 400, "Missing required parameter: 'model'.", {
        param: 'model',
        code: 'missing_required_parameter',
      });
    }

    const behaviour = behaviourFor(model);
    const counter = countersFor(model);
    if (behaviour.hangBeforeHeaders) return;
    const step = behaviour.sequence?.[counter.sequenced++] ?? 'ok';
    if (step !== 'ok' && 'hangBeforeHeaders' in step) return;
    if (step !== 'ok' && 'fail' in step) {
      return sendError(
        res,
        step.fail,
        step.message ?? `Scripted failure (request ${counter.sequenced})`,
        step,
      );
    }
    if (behaviour.failFirst && counter.failed < behaviour.failFirst.count) {
      counter.failed += 1;
      const { status, message } = behaviour.failFirst;
      const text = message ?? `Scripted failure ${counter.failed} of ${behaviour.failFirst.count}`;
      return sendError(res, status, text, behaviour.failFirst);
    }
    let stop = stopOf(step);
    if (!stop && behaviour.dropAfterDeltas && counter.dropped < behaviour.dropAfterDeltas.attempts) {
      counter.dropped += 1;
      stop = { afterDeltas: behaviour.dropAfterDeltas.after, how: 'drop' };
    }

    const shape = shapeOf(behaviour, body);
    const text = answerText(shape);
    const usage = usageOf(behaviour, body, text);
    if (body.background === true && body.stream === true) {
      recorded.responseId = background.create(res, {
        model,
        text,
        chunks: shape.items.flat(2),
        delayMs: behaviour.deltaDelayMs ?? 0,
        usage: { ...usage },
        behaviour: behaviour.background ?? {},
        markDropped,
      });
      return;
    }

    const object = responseObjects(body, model, behaviour, usage);
    if (body.stream !== true) {
      if (stop?.how === 'drop') {
        markDropped();
        return cutConnection(res);
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': newId('req') });
      if (behaviour.hang || stop?.how === 'stall') return void res.flushHeaders();
      const item = { id: newId('msg'), type: 'message', status: 'completed', role: 'assistant' };
      const part = { type: 'output_text', text, annotations: [], logprobs: [] };
      return void res.end(JSON.stringify(object('completed', [{ ...item, content: [part] }])));
    }

    res.writeHead(200, { ...SSE_HEADERS, 'x-request-id': newId('req') });
    await streamAnswer({
      writer: eventWriter(res, behaviour.wire),
      res,
      shape,
      object,
      delayMs: behaviour.deltaDelayMs ?? 0,
      ...(stop ? { stop } : {}),
      markDropped,
      ...(behaviour.incomplete ? { incomplete: behaviour.incomplete } : {}),
      ...(behaviour.hang ? { hang: true } : {}),
      ...(behaviour.beforeEnd ? { beforeEnd: behaviour.beforeEnd } : {}),
    });
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
          embeddings.reset();
        },
        requestsFor(model) {
          return requests.filter((request) => request.model === model);
        },
        embeddingRequests: embeddings.requests,
        scriptEmbeddings(model, behaviour) {
          embeddings.script(model, behaviour);
        },
        embeddingRequestsFor(model) {
          return embeddings.requestsFor(model);
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
