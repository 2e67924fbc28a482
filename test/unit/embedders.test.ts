// SPEC §3 embedders: the built-in `hash` provider (definition, determinism, quality, speed) and the
// `openai` provider against the scripted fake server (batching, ordering, normalisation, failures).
import { createServer } from 'node:net';
import fc from 'fast-check';
import { APIUserAbortError } from 'openai';
import { createEmbedder } from '../../infra/create-embedder';
import { EmbeddingError } from '../../infra/embedders';
import { hashEmbedding, HashEmbedder } from '../../infra/hash-embedder';
import { OpenAiEmbedder, type OpenAiEmbedderOptions } from '../../infra/openai-embedder';
import { startFakeModelServer } from '../fakes/fake-model-server';
import type { FakeModelServer } from '../fakes/fake-model-server';

const norm = (v: number[]): number => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
const cosine = (a: number[], b: number[]): number =>
  a.reduce((sum, x, i) => sum + x * b[i]!, 0) / (norm(a) * norm(b));
const rounded = (v: number[]): number[] => v.map((x) => Math.round(x * 1e6) / 1e6 + 0);

// The documented definition, written the slow and obvious way, to pin the fast implementation.
function fmix(value: number): number {
  let x = value;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}
function referenceEmbedding(text: string, size: number): number[] {
  const words = [...text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)].map((match) => match[0]);
  const features = [...words, ...words.slice(1).map((word, i) => `${words[i]!} ${word}`)];
  const vector = new Array<number>(size).fill(0);
  for (const feature of features) {
    let h = 0x811c9dc5;
    for (const byte of new TextEncoder().encode(feature)) h = Math.imul(h ^ byte, 0x01000193);
    vector[fmix(h) % size]! += fmix(h ^ 0x9e3779b9) & 1 ? -1 : 1;
  }
  const length = norm(vector);
  return length > 0 ? vector.map((x) => x / length) : vector;
}

describe('hash embedder (SPEC §3 hash)', () => {
  it('is deterministic, and pinned: stored vectors stay valid across releases', () => {
    expect(hashEmbedding('Hello, world!', 8)).toEqual(hashEmbedding('Hello, world!', 8));
    expect(rounded(hashEmbedding('Hello, world!', 8))).toEqual([0, 0.57735, 0, 0, -0.57735, 0, -0.57735, 0]);
    expect(rounded(hashEmbedding('Dog bites man', 4))).toEqual([0, -0.894427, 0, 0.447214]);
    expect(rounded(hashEmbedding('Café 日本語 𝒜bc', 6))).toEqual([
      0.755929, 0, 0.377964, 0, -0.377964, 0.377964,
    ]);
  });

  it('hashes unigrams and bigrams with FNV-1a over UTF-8 (1- to 4-byte characters)', () => {
    for (const text of ['hello', 'Naïve Bayes', 'ß Straße', '日本語 テキスト', '𝒜bc 𝒜', 'x1 y2, z3!']) {
      for (const size of [1, 7, 1000])
        expect(hashEmbedding(text, size)).toEqual(referenceEmbedding(text, size));
    }
  });

  it('matches the definition on arbitrary Unicode text (lone surrogates, marks, emoji included)', () => {
    const pieces = [
      'a',
      'Z',
      '9',
      ' ',
      '.',
      'é',
      'e\u0301',
      'İ',
      'ß',
      '日',
      '🚀',
      '𝒜',
      '\ud800',
      '\udc00',
      '٣',
      '\n',
    ];
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.array(fc.constantFrom(...pieces)).map((p) => p.join('')),
        ),
        fc.integer({ min: 1, max: 64 }),
        (text, size) => {
          expect(hashEmbedding(text, size)).toEqual(referenceEmbedding(text, size));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('words are lowercase runs of Unicode letters and digits', () => {
    expect(hashEmbedding('Hello, WORLD!!', 64)).toEqual(hashEmbedding('hello world', 64));
    expect(hashEmbedding('  hello\n\tworld  ', 64)).toEqual(hashEmbedding('hello world', 64));
    expect(hashEmbedding('Straße 42', 64)).toEqual(hashEmbedding('straße 42', 64));
    expect(hashEmbedding('日本語', 64)).not.toEqual(hashEmbedding('日本', 64));
  });

  it('has unit L2 norm for any non-empty text and any size, 1 and 2000 included', () => {
    const texts = ['a', 'a b', 'a a', 'the cat sat on the mat', 'x y x y x y', 'Ünïcödé 123 ✓ ok'];
    for (const size of [1, 2, 3, 7, 384, 1536, 2000]) {
      for (const text of texts) {
        const vector = hashEmbedding(text, size);
        expect(vector).toHaveLength(size);
        expect(norm(vector)).toBeCloseTo(1, 12);
      }
    }
  });

  it('a text without any word embeds to the zero vector', () => {
    for (const text of ['', '   ', '!?, ...', '✓ 🚀'])
      expect(hashEmbedding(text, 16)).toEqual(new Array(16).fill(0));
  });

  it('similar texts are closer than unrelated ones (cosine)', () => {
    const size = 384;
    const query = hashEmbedding('How do I reset my account password?', size);
    const similar = hashEmbedding('To reset your account password, open the settings page.', size);
    const unrelated = hashEmbedding('The quarterly revenue grew by eight percent in Europe.', size);
    // 4 shared features (reset, account, password, "account password") of 13 and 17.
    expect(cosine(query, similar)).toBeGreaterThan(0.2);
    expect(Math.abs(cosine(query, unrelated))).toBeLessThan(0.1);
  });

  it('bigrams matter: word order changes the vector', () => {
    const a = hashEmbedding('dog bites man', 256);
    const b = hashEmbedding('man bites dog', 256);
    expect(a).not.toEqual(b);
    expect(cosine(a, b)).toBeGreaterThan(0.3); // same unigrams
    expect(cosine(a, b)).toBeLessThan(0.9); // different bigrams
  });

  it('rejects sizes that are not positive integers', () => {
    for (const size of [0, -1, 1.5, Number.NaN]) {
      expect(() => hashEmbedding('x', size)).toThrow(RangeError);
      expect(() => new HashEmbedder(size)).toThrow(RangeError);
    }
  });

  it('HashEmbedder embeds each text in order; createEmbedder("hash") builds one', async () => {
    const embedder = createEmbedder('hash', {}, 32);
    expect(embedder).toBeInstanceOf(HashEmbedder);
    expect(embedder.size).toBe(32);
    expect(await embedder.embed(['one', 'two'])).toEqual([
      hashEmbedding('one', 32),
      hashEmbedding('two', 32),
    ]);
    expect(await embedder.embed([])).toEqual([]);
  });
});

describe('OpenAI-compatible embedder (SPEC §3 openai)', () => {
  let server: FakeModelServer;
  const apiKey = 'sk-test-SECRET-0123456789abcdef';
  const options = (overrides: Partial<OpenAiEmbedderOptions> = {}): OpenAiEmbedderOptions => ({
    endpoint: server.url,
    model: 'emb',
    apiKey,
    batchSize: 2,
    size: 8,
    ...overrides,
  });

  async function failure(promise: Promise<unknown>): Promise<EmbeddingError> {
    const error: unknown = await promise.then(
      () => undefined,
      (err: unknown) => err,
    );
    if (!(error instanceof EmbeddingError))
      throw new Error(`expected an EmbeddingError, got ${String(error)}`);
    expect(error.message).not.toContain(apiKey);
    return error;
  }

  beforeAll(async () => {
    server = await startFakeModelServer();
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  const texts = ['alpha one', 'beta two', 'gamma three', 'delta four', 'epsilon five'];

  it('sends batches of batchSize, one after another, with the key and float encoding', async () => {
    const vectors = await new OpenAiEmbedder(options()).embed(texts);
    expect(vectors).toHaveLength(5);
    const sent = server.embeddingRequestsFor('emb');
    expect(sent.map((request) => request.body.input)).toEqual([
      ['alpha one', 'beta two'],
      ['gamma three', 'delta four'],
      ['epsilon five'],
    ]);
    expect(sent.every((request) => request.body.encoding_format === 'float')).toBe(true);
    expect(sent.every((request) => request.body.dimensions === undefined)).toBe(true);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(server.requests).toHaveLength(0);
  });

  it('returns unit vectors in input order, whatever order the server lists them in', async () => {
    server.scriptEmbeddings('emb', { reverseOrder: true });
    const vectors = await new OpenAiEmbedder(options({ batchSize: 3 })).embed(texts);
    // The fake answers the hash embedding scaled by a text-dependent factor.
    vectors.forEach((vector, i) => {
      expect(norm(vector)).toBeCloseTo(1, 12);
      expect(rounded(vector)).toEqual(rounded(hashEmbedding(texts[i]!, 8)));
    });
    const raw = server.embeddingRequestsFor('emb');
    expect(raw).toHaveLength(2);
  });

  it('embeds nothing without a request', async () => {
    expect(await new OpenAiEmbedder(options()).embed([])).toEqual([]);
    expect(server.embeddingRequests).toHaveLength(0);
  });

  it('a vector of the wrong dimension is a bad_response naming expected and actual', async () => {
    server.scriptEmbeddings('emb', { wrongSize: 5 });
    const error = await failure(new OpenAiEmbedder(options()).embed(['a']));
    expect(error.kind).toBe('bad_response');
    expect(error.message).toMatch(/expected vectors of 8 dimensions, got 5/);
  });

  it('429 is retryable with the retry-after hint, and is not retried by the embedder', async () => {
    server.scriptEmbeddings('emb', {
      failFirst: { count: 1, status: 429, message: 'Rate limit reached', retryAfterSeconds: 2 },
    });
    const error = await failure(new OpenAiEmbedder(options()).embed(['a']));
    expect(error).toMatchObject({ kind: 'retryable', upstreamStatus: 429, retryAfterMs: 2000 });
    expect(error.message).toContain('Rate limit reached');
    expect(server.embeddingRequestsFor('emb')).toHaveLength(1);
  });

  it.each([408, 409, 500, 503])('%i is retryable', async (status) => {
    server.scriptEmbeddings('emb', { failFirst: { count: 1, status } });
    const error = await failure(new OpenAiEmbedder(options()).embed(['a']));
    expect(error).toMatchObject({ kind: 'retryable', upstreamStatus: status, retryAfterMs: undefined });
  });

  it('400 is rejected', async () => {
    server.scriptEmbeddings('emb', { failFirst: { count: 1, status: 400, message: 'Bad input' } });
    const error = await failure(new OpenAiEmbedder(options()).embed(['a']));
    expect(error).toMatchObject({ kind: 'rejected', upstreamStatus: 400 });
    expect(error.message).toBe('Embedding server answered 400: Bad input');
  });

  it('401 is rejected and the message never carries the api key, even masked', async () => {
    server.scriptEmbeddings('emb', {
      failFirst: {
        count: 1,
        status: 401,
        message: `Incorrect API key provided: ${apiKey}. Or sk-test***cdef.`,
      },
    });
    const error = await failure(new OpenAiEmbedder(options()).embed(['a']));
    expect(error).toMatchObject({ kind: 'rejected', upstreamStatus: 401 });
    expect(error.message).not.toContain('SECRET');
    expect(error.message).not.toContain('cdef');
  });

  it('a server that is down is unreachable', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const error = await failure(
      new OpenAiEmbedder(options({ endpoint: `http://127.0.0.1:${port}/v1` })).embed(['a']),
    );
    expect(error.kind).toBe('unreachable');
    expect(error.upstreamStatus).toBeUndefined();
  });

  it('a timeout is unreachable', async () => {
    server.scriptEmbeddings('emb', { delayMs: 500 });
    const error = await failure(new OpenAiEmbedder(options({ timeoutMs: 50 })).embed(['a']));
    expect(error.kind).toBe('unreachable');
  });

  it("an abort by the caller's signal is rethrown as the SDK's abort error", async () => {
    server.scriptEmbeddings('emb', { delayMs: 2000 });
    const controller = new AbortController();
    const pending = new OpenAiEmbedder(options({ signal: controller.signal })).embed(['a']);
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
  });

  it('createEmbedder("openai") reads endpoint, model and batch_size', async () => {
    const embedder = createEmbedder(
      'openai',
      { endpoint: server.url, model: 'emb', batch_size: 4 },
      8,
      apiKey,
    );
    expect(embedder).toBeInstanceOf(OpenAiEmbedder);
    expect(await embedder.embed(texts)).toHaveLength(5);
    expect(
      server.embeddingRequestsFor('emb').map((request) => (request.body.input as string[]).length),
    ).toEqual([4, 1]);
    expect(() => createEmbedder('openai', { model: 'emb' }, 8)).toThrow(/endpoint/);
    expect(() => createEmbedder('openai', { endpoint: server.url }, 8)).toThrow(/model/);
    expect(() => createEmbedder('openai', { endpoint: server.url, model: 'm', batch_size: 0 }, 8)).toThrow(
      RangeError,
    );
  });
});
