// The fake model server's Embeddings API (POST <prefix>/embeddings): vectors from the built-in hash
// embedder (so similar texts are close), scripted failures, refusals, wrong sizes, delays and
// reordered answers, each per model; requests are recorded apart from the Responses API's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hashEmbedding } from '../../infra/hash-embedder';
import {
  countWords,
  newId,
  readJsonObject,
  recordOf,
  sendError,
  type FakeFailure,
  type RecordedRequest,
} from './fake-wire';

/** Scripted behaviour of POST /embeddings for one model. */
export interface FakeEmbeddingBehaviour {
  /** Vector dimension answered (default 8; a request's `dimensions` overrides it, as OpenAI does). */
  size?: number;
  /** The first `count` requests for this model answer HTTP `status` with an OpenAI error body. */
  failFirst?: { count: number; status: number; message?: string } & FakeFailure;
  /** Answer vectors of this dimension whatever was asked (a misconfigured model). */
  wrongSize?: number;
  /** Answer HTTP 400 (as for an input the model refuses) to every request with an input containing this text. */
  refuseInputContaining?: string;
  /** Wait this long before answering (default 0). */
  delayMs?: number;
  /** List `data` in reverse input order (each item keeps its true `index`), as servers may. */
  reverseOrder?: boolean;
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

/** Parses and checks an embeddings request; answers the 400 itself and returns undefined when it is bad. */
function validInput(res: ServerResponse, model: string, body: Record<string, unknown>): string[] | undefined {
  if (model === '') {
    sendError(res, 400, "Missing required parameter: 'model'.", {
      param: 'model',
      code: 'missing_required_parameter',
    });
    return undefined;
  }
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0 || !input.every((item) => typeof item === 'string')) {
    sendError(res, 400, "'input' must be a string or a non-empty array of strings.", { param: 'input' });
    return undefined;
  }
  if (input.some((text) => text === '')) {
    // As OpenAI does; some other servers accept empty strings.
    sendError(res, 400, "'$.input' is invalid. Please check the API reference.", { param: 'input' });
    return undefined;
  }
  return input as string[];
}

/** Waits `ms`, or less when the client goes (timeout, abort) or the server closes: no stray timers. */
function delay(res: ServerResponse, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    res.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export class FakeEmbeddings {
  readonly requests: RecordedRequest[] = [];
  private readonly scripts = new Map<string, FakeEmbeddingBehaviour>();
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly defaults: FakeEmbeddingBehaviour,
    private readonly closing: () => boolean,
  ) {}

  script(model: string, behaviour: FakeEmbeddingBehaviour): void {
    this.scripts.set(model, behaviour);
  }

  requestsFor(model: string): RecordedRequest[] {
    return this.requests.filter((request) => request.model === model);
  }

  reset(): void {
    this.scripts.clear();
    this.failures.clear();
    this.requests.length = 0;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonObject(req, res);
    if (!body) return;
    const model = typeof body.model === 'string' ? body.model : '';
    const recorded = recordOf(req, model, body);
    this.requests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished && !this.closing()) recorded.aborted = true;
    });
    const texts = validInput(res, model, body);
    if (!texts) return;

    const behaviour: FakeEmbeddingBehaviour = { ...this.defaults, ...this.scripts.get(model) };
    if (behaviour.delayMs) {
      await delay(res, behaviour.delayMs);
      if (res.destroyed || res.writableEnded) return;
    }
    const failed = this.failures.get(model) ?? 0;
    if (behaviour.failFirst && failed < behaviour.failFirst.count) {
      this.failures.set(model, failed + 1);
      const { status, message } = behaviour.failFirst;
      const text = message ?? `Scripted failure ${failed + 1} of ${behaviour.failFirst.count}`;
      return sendError(res, status, text, behaviour.failFirst);
    }
    const refused = behaviour.refuseInputContaining;
    if (refused !== undefined && texts.some((t) => t.includes(refused))) {
      return sendError(res, 400, 'This input cannot be embedded');
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
}
