// Embedders (SPEC §3): the built-in `hash` provider (feature hashing, no model, no network) and
// `openai`, any OpenAI-compatible `/embeddings` endpoint. Both return L2-normalised vectors so
// cosine distance is the only metric the store needs. Temporal owns retries (STYLE 6): the OpenAI
// embedder never retries, it classifies failures into an EmbeddingError for the activity to act on.
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';

export interface Embedder {
  /** Dimension of every vector returned. */
  readonly size: number;
  /** One vector per text, in the order of `texts`. */
  embed(texts: string[]): Promise<number[][]>;
}

export type EmbeddingErrorKind = 'unreachable' | 'rejected' | 'retryable' | 'bad_response';

export class EmbeddingError extends Error {
  constructor(
    readonly kind: EmbeddingErrorKind,
    message: string,
    readonly upstreamStatus?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }
}

// ---------------------------------------------------------------------------------------------
// hash: word unigrams and bigrams, each hashed with FNV-1a (32-bit, over the UTF-8 bytes of the
// feature: "word" or "word1 word2") to a dimension and a sign, counted, then L2-normalised.
// Words are the maximal runs of \p{L}/\p{N} code points of text.toLowerCase() (locale-free). No
// Unicode normalisation: combining marks split words, so decomposed "e\u0301" differs from "é".
// The index comes from a murmur3 finaliser of the FNV hash (FNV's low bits are weak) and the sign
// from a second, differently seeded finaliser, so colliding features tend to cancel instead of
// piling up in one direction (the signed "hashing trick").
// Every feature weighs ±1 and a text of n ≥ 1 words has 2n − 1 features (an odd count), so a
// non-empty text never sums to the zero vector, even with size 1. A text without any word (empty,
// only punctuation or spaces) embeds to all zeros: it has no direction, and cosine against it is
// undefined (pgvector answers NaN), so callers should not store or search with such texts.
// Stored vectors depend on every detail here; test/unit/embedders.test.ts pins values.

// Module-level copies: a global lookup per call is slow inside vm contexts (jest measured 100×).
const imul = Math.imul;
const sqrt = Math.sqrt;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Continue an FNV-1a hash with the UTF-8 bytes of one code point. */
function fnvCodePoint(hash: number, cp: number): number {
  let h = hash;
  if (cp < 0x80) return imul(h ^ cp, FNV_PRIME);
  if (cp < 0x800) {
    h = imul(h ^ (0xc0 | (cp >> 6)), FNV_PRIME);
  } else {
    if (cp < 0x10000) {
      h = imul(h ^ (0xe0 | (cp >> 12)), FNV_PRIME);
    } else {
      h = imul(h ^ (0xf0 | (cp >> 18)), FNV_PRIME);
      h = imul(h ^ (0x80 | ((cp >> 12) & 0x3f)), FNV_PRIME);
    }
    h = imul(h ^ (0x80 | ((cp >> 6) & 0x3f)), FNV_PRIME);
  }
  return imul(h ^ (0x80 | (cp & 0x3f)), FNV_PRIME);
}

// Word characters (\p{L} or \p{N}): a table for ASCII, a lazily filled cache for the rest of the
// BMP (0 unknown, 1 word, 2 not), the regex itself for astral code points.
const WORD_CHAR = /^[\p{L}\p{N}]$/u;
const ASCII_WORD = new Uint8Array(128).map((_, c) => (WORD_CHAR.test(String.fromCharCode(c)) ? 1 : 0));
const BMP_CLASS = new Uint8Array(0x10000);

function isWordChar(cp: number): boolean {
  if (cp < 0x80) return ASCII_WORD[cp] === 1;
  if (cp < 0x10000) {
    let kind = BMP_CLASS[cp]!;
    if (kind === 0) {
      kind = WORD_CHAR.test(String.fromCharCode(cp)) ? 1 : 2;
      BMP_CLASS[cp] = kind;
    }
    return kind === 1;
  }
  return WORD_CHAR.test(String.fromCodePoint(cp));
}

/** murmur3's 32-bit finaliser: every input bit affects every output bit. */
function fmix32(value: number): number {
  let h = value;
  h = imul(h ^ (h >>> 16), 0x85ebca6b);
  h = imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const SIGN_SEED = 0x9e3779b9;

function addFeature(vector: Float64Array, hash: number): void {
  const index = fmix32(hash) % vector.length;
  vector[index]! += fmix32(hash ^ SIGN_SEED) & 1 ? -1 : 1;
}

function assertSize(size: number): void {
  if (!Number.isSafeInteger(size) || size < 1) {
    throw new RangeError(`Embedding size must be a positive integer, got ${size}`);
  }
}

/**
 * SPEC §3 `hash`: feature hashing of lowercase word unigrams and bigrams (words are runs of
 * Unicode letters and digits) into `size` dimensions, L2-normalised, deterministic across
 * processes and versions. A text with no word gives the zero vector (see the note above).
 */
export function hashEmbedding(text: string, size: number): number[] {
  assertSize(size);
  const vector = new Float64Array(size);
  // One pass, no substrings: while a word is read, its bytes feed both its own hash and the
  // bigram's, which is FNV-1a of "previous word" continued from the previous word's hash.
  const lower = text.toLowerCase();
  const length = lower.length;
  let inWord = false;
  let hasPrevious = false;
  let previous = 0;
  let unigram = 0;
  let bigram = 0;
  for (let i = 0; i <= length; i++) {
    let cp = i < length ? lower.charCodeAt(i) : -1;
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < length) {
      const low = lower.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (cp >= 0 && isWordChar(cp)) {
      if (!inWord) {
        inWord = true;
        unigram = FNV_OFFSET;
        bigram = imul(previous ^ 0x20, FNV_PRIME);
      }
      unigram = fnvCodePoint(unigram, cp);
      bigram = fnvCodePoint(bigram, cp);
    } else if (inWord) {
      inWord = false;
      addFeature(vector, unigram);
      if (hasPrevious) addFeature(vector, bigram);
      hasPrevious = true;
      previous = unigram;
    }
  }
  return normalise(vector);
}

export class HashEmbedder implements Embedder {
  constructor(readonly size: number) {
    assertSize(size);
  }

  embed(texts: string[]): Promise<number[][]> {
    return Promise.resolve(texts.map((text) => hashEmbedding(text, this.size)));
  }
}

/** Unit-length copy; the zero vector stays zero. */
function normalise(vector: ArrayLike<number>): number[] {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = sqrt(sum);
  const out = new Array<number>(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = norm > 0 ? vector[i]! / norm : 0;
  return out;
}

// ---------------------------------------------------------------------------------------------
// openai

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
const MAX_RETRY_AFTER_MS = 60_000;

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

/** The upstream's retry hint in milliseconds (retry-after-ms or retry-after), capped at 60 s. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms > 0) return Math.min(ms, MAX_RETRY_AFTER_MS);
  const raw = headers?.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  const delay = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(raw) - Date.now();
  return Number.isFinite(delay) && delay > 0 ? Math.min(delay, MAX_RETRY_AFTER_MS) : undefined;
}

/** The upstream's message with the key (or an OpenAI-style masked form of any key) removed. */
function scrubbed(message: string, apiKey: string): string {
  let text = message;
  if (apiKey.length >= 4) text = text.split(apiKey).join('***');
  return text.replace(/\bsk-[\w*-]{4,}/g, 'sk-***').slice(0, 500);
}

function upstreamMessage(err: APIError, apiKey: string): string {
  const body = err.error as { message?: unknown } | undefined;
  const message =
    typeof body?.message === 'string' ? body.message : err.message.replace(new RegExp(`^${err.status} `), '');
  return scrubbed(message, apiKey);
}

/** SDK errors → EmbeddingError; an abort by the caller's signal is rethrown unchanged. */
export function classifyEmbeddingError(err: unknown, apiKey = ''): EmbeddingError | APIUserAbortError {
  if (err instanceof EmbeddingError || err instanceof APIUserAbortError) return err;
  if (err instanceof APIConnectionError) {
    return new EmbeddingError(
      'unreachable',
      `Embedding server unreachable: ${scrubbed(err.message, apiKey)}`,
    );
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    const message = `Embedding server answered ${status}: ${upstreamMessage(err, apiKey)}`;
    if (status === 408 || status === 409 || status === 429 || status >= 500) {
      return new EmbeddingError('retryable', message, status, retryAfterMs(err.headers));
    }
    return new EmbeddingError('rejected', message, status);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new EmbeddingError('unreachable', `Embedding call failed: ${scrubbed(message, apiKey)}`);
}

// ---------------------------------------------------------------------------------------------

const DEFAULT_BATCH_SIZE = 64;

/**
 * An embedder from a stored embedding model (SPEC §3). `parameters` are the model's public
 * parameters (openai: endpoint, model, batch_size); the decrypted api key comes separately.
 */
export function createEmbedder(
  provider: 'hash' | 'openai',
  parameters: Record<string, unknown>,
  size: number,
  apiKey?: string,
): Embedder {
  if (provider === 'hash') return new HashEmbedder(size);
  if (provider !== 'openai') throw new Error(`Unknown embedding provider: ${String(provider)}`);
  const { endpoint, model, batch_size: batchSize = DEFAULT_BATCH_SIZE } = parameters;
  if (typeof endpoint !== 'string' || endpoint === '') {
    throw new Error('The openai embedding provider needs a string parameter "endpoint"');
  }
  if (typeof model !== 'string' || model === '') {
    throw new Error('The openai embedding provider needs a string parameter "model"');
  }
  if (typeof batchSize !== 'number') throw new Error('The "batch_size" parameter must be an integer');
  // Servers without authentication (vLLM, Ollama, TEI) ignore the header; the SDK needs some key.
  return new OpenAiEmbedder({ endpoint, model, apiKey: apiKey ?? 'none', batchSize, size });
}
