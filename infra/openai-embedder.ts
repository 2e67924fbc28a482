// SPEC §3 `openai`: any OpenAI-compatible `/embeddings` endpoint, in batches of `batchSize` texts
// sent one after another. Temporal owns retries (STYLE 6): the embedder never retries, it
// classifies failures into an EmbeddingError for the activity to act on, with the key removed
// from every message.
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { assertSize, EmbeddingError, normalise, type Embedder } from './embedders';
import { isRetryableStatus, retryAfterMs, upstreamMessage } from './upstream-errors';

export interface OpenAiEmbedderOptions {
  /** Base URL of the API, e.g. https://api.openai.com/v1 (requests go to `${endpoint}/embeddings`). */
  endpoint: string;
  model: string;
  apiKey: string;
  /** Texts per request. */
  batchSize: number;
  /** Expected dimension; any other answer is a bad_response. */
  size: number;
  /** Aborts the request in flight; the SDK's APIUserAbortError is rethrown unchanged. */
  signal?: AbortSignal;
  /** Per request (default 60 s, the ingestion embed activity's budget; the SDK's own is 10 min). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;

export class OpenAiEmbedder implements Embedder {
  readonly size: number;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    assertSize(options.size);
    if (!Number.isSafeInteger(options.batchSize) || options.batchSize < 1) {
      throw new RangeError(`Embedding batch size must be a positive integer, got ${options.batchSize}`);
    }
    this.size = options.size;
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.endpoint,
      maxRetries: 0,
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    });
  }

  async embed(texts: string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    // Batches go one after another: a provider's rate limit is the usual bottleneck, and a failure
    // then leaves no other request of this call in flight.
    for (let start = 0; start < texts.length; start += this.options.batchSize) {
      const batch = texts.slice(start, start + this.options.batchSize);
      vectors.push(...(await this.embedBatch(batch)));
    }
    return vectors;
  }

  private async embedBatch(batch: string[]): Promise<number[][]> {
    let response: OpenAI.CreateEmbeddingResponse;
    try {
      response = await this.client.embeddings.create(
        { model: this.options.model, input: batch, encoding_format: 'float' },
        { signal: this.options.signal },
      );
    } catch (err) {
      throw classifyEmbeddingError(err, this.options.apiKey);
    }
    return this.readVectors(response, batch.length);
  }

  private readVectors(response: OpenAI.CreateEmbeddingResponse, expected: number): number[][] {
    const bad = (message: string): EmbeddingError =>
      new EmbeddingError('bad_response', `Embedding server (model ${this.options.model}): ${message}`);
    const data: unknown = (response as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(data)) throw bad('the answer has no data array');
    if (data.length !== expected) throw bad(`expected ${expected} embeddings, got ${data.length}`);
    const vectors = new Array<number[] | undefined>(expected);
    data.forEach((item: { index?: unknown; embedding?: unknown } | null, position) => {
      // Servers may answer out of order: `index` says which input each vector belongs to.
      const index = item?.index ?? position;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected) {
        throw bad(`embedding index ${String(index)} is out of range 0..${expected - 1}`);
      }
      if (vectors[index]) throw bad(`embedding index ${index} appears twice`);
      const embedding = item?.embedding;
      if (!Array.isArray(embedding)) throw bad(`embedding ${index} is not an array of numbers`);
      if (embedding.length !== this.size) {
        throw bad(
          `expected vectors of ${this.size} dimensions, got ${embedding.length} (embedding ${index})`,
        );
      }
      if (!embedding.every((value) => typeof value === 'number' && Number.isFinite(value))) {
        throw bad(`embedding ${index} contains a value that is not a finite number`);
      }
      vectors[index] = normalise(embedding as number[]);
    });
    return vectors as number[][];
  }
}

/** The upstream's message with the key (or an OpenAI-style masked form of any key) removed. */
function scrubbed(message: string, apiKey: string): string {
  let text = message;
  if (apiKey.length >= 4) text = text.split(apiKey).join('***');
  return text.replace(/\bsk-[\w*-]{4,}/g, 'sk-***').slice(0, 500);
}

/** SDK errors → EmbeddingError; an abort by the caller's signal is rethrown unchanged. */
function classifyEmbeddingError(err: unknown, apiKey = ''): EmbeddingError | APIUserAbortError {
  if (err instanceof EmbeddingError || err instanceof APIUserAbortError) return err;
  if (err instanceof APIConnectionError) {
    return new EmbeddingError(
      'unreachable',
      `Embedding server unreachable: ${scrubbed(err.message, apiKey)}`,
    );
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    const message = `Embedding server answered ${status}: ${scrubbed(upstreamMessage(err), apiKey)}`;
    if (isRetryableStatus(status)) {
      return new EmbeddingError('retryable', message, status, retryAfterMs(err.headers));
    }
    return new EmbeddingError('rejected', message, status);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new EmbeddingError('unreachable', `Embedding call failed: ${scrubbed(message, apiKey)}`);
}
