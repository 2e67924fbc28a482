// SPEC §18 limits configured through AGENTRY_LIMIT_*: one stack with lowered limits answers 400
// naming the limit where the stack with the defaults accepts the same request, and /openapi.json
// documents the configured values.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { seedPipeline } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';

let lowered: Stack;
let defaults: Stack;
let fake: FakeModelServer;

const LOWERED = {
  AGENTRY_LIMIT_AGENT_MESSAGES: '2',
  AGENTRY_LIMIT_AGENT_PLACEHOLDERS: '1',
  AGENTRY_LIMIT_K: '10',
  AGENTRY_LIMIT_TEMPLATE_BYTES: '2048',
  AGENTRY_LIMIT_CHAIN_STEPS: '2',
  AGENTRY_LIMIT_CHAIN_DEPTH: '1',
  AGENTRY_LIMIT_DOCUMENTS_PER_BATCH: '2',
  AGENTRY_LIMIT_FILTER_DEPTH: '2',
  AGENTRY_LIMIT_FRAGMENT_CHARS: '500',
  AGENTRY_LIMIT_RENDERED_PROMPT_BYTES: '4096',
};

beforeAll(async () => {
  fake = await startFakeModelServer();
  // The lowered stack runs a worker: the rendered-prompt limit is checked by an activity.
  [lowered, defaults] = await Promise.all([startStack({ env: LOWERED }), startStack({ worker: false })]);
});

afterAll(async () => {
  await Promise.all([lowered?.stop(), defaults?.stop()]);
  await fake?.close();
});

const both = () =>
  [
    ['lowered', lowered],
    ['defaults', defaults],
  ] as const;

/** The error text of a 400: `detail` (problem details) or seed 002's `error`. */
const errorText = (body: Record<string, unknown>): string =>
  [body.detail, body.error, JSON.stringify(body.details ?? '')].filter(Boolean).join(' ');

const agent = (name: string, messages: number, k = 5) => ({
  name,
  prompt: Array.from({ length: messages }, (_, i) => ({
    role: i === 0 ? 'system' : 'user',
    template: i === messages - 1 ? 'Context: {context} Question: {question}' : `message ${i}`,
  })),
  placeholders: [
    { name: 'question', type: 'query' },
    { name: 'context', type: 'similarity', target: 'question', params: { k } },
  ],
});

describe('§18 agent limits', () => {
  it('messages: 3 messages exceed AGENTRY_LIMIT_AGENT_MESSAGES=2; the defaults accept them', async () => {
    const res = await lowered.api.post('/agents', agent('three-messages', 3));
    expect(res.status).toBe(400);
    expect(errorText(res.body)).toContain('prompt must NOT have more than 2 items');
    expect((await defaults.api.post('/agents', agent('three-messages', 3))).status).toBe(201);
  });

  it('placeholders and k: the configured counts, with the messages naming the limit', async () => {
    const two = await lowered.api.post('/agents', agent('two-placeholders', 2));
    expect(two.status).toBe(400);
    expect(errorText(two.body)).toContain('placeholders must NOT have more than 1 items');
    const k = await lowered.api.post('/agents', {
      name: 'k-eleven',
      prompt: [{ role: 'user', template: '{context}' }],
      placeholders: [{ name: 'context', type: 'similarity', target: 'context', params: { k: 11 } }],
    });
    expect(k.status).toBe(400);
    expect(errorText(k.body)).toContain('k must be at most 10');
    expect((await defaults.api.post('/agents', agent('two-placeholders', 2, 11))).status).toBe(201);
  });

  it('template: a 3000-byte message exceeds AGENTRY_LIMIT_TEMPLATE_BYTES=2048', async () => {
    const big = {
      name: 'big-template',
      prompt: [
        { role: 'system', template: 'é'.repeat(1500) },
        { role: 'user', template: '{question}' },
      ],
      placeholders: [{ name: 'question', type: 'query' }],
    };
    const res = await lowered.api.post('/agents', big);
    expect(res.status).toBe(400);
    expect(errorText(res.body)).toContain(
      'prompt[0].template is 3000 bytes; the template limit is 2048 bytes',
    );
    expect((await defaults.api.post('/agents', big)).status).toBe(201);
  });
});

describe('§18 prompt library limits', () => {
  it('template: userPrompt over 2048 bytes is a 400 naming the limit; the defaults accept it', async () => {
    // 1500 characters (under the schema's character bound), 3000 UTF-8 bytes.
    const prompt = { promptId: 'big', name: 'big', userPrompt: 'é'.repeat(1500) };
    const res = await lowered.api.post('/api/v1/prompts', prompt);
    expect(res.status).toBe(400);
    expect(errorText(res.body)).toContain('userPrompt is 3000 bytes; the template limit is 2048 bytes');
    const chars = await lowered.api.post('/api/v1/prompts', { ...prompt, userPrompt: 'a'.repeat(2049) });
    expect(chars.status).toBe(400);
    expect(errorText(chars.body)).toContain('must NOT have more than 2048 characters');
    expect((await defaults.api.post('/api/v1/prompts', prompt)).status).toBe(201);
  });

  it('chain depth: a reference at depth 2 exceeds AGENTRY_LIMIT_CHAIN_DEPTH=1', async () => {
    for (const [, s] of both()) {
      const post = (promptId: string, userPrompt: string) =>
        s.api.post('/api/v1/prompts', { promptId, name: promptId, userPrompt });
      expect((await post('d_leaf', 'leaf')).status).toBe(201);
      expect((await post('d_mid', 'mid {{prompt:d_leaf}}')).status).toBe(201);
    }
    const top = { promptId: 'd_top', name: 'd_top', userPrompt: 'top {{prompt:d_mid}}' };
    const res = await lowered.api.post('/api/v1/prompts', top);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      { promptId: 'd_mid', reason: 'Maximum chain depth exceeded', position: 4 },
    ]);
    expect((await defaults.api.post('/api/v1/prompts', top)).status).toBe(201);
  });

  it('chain depth: with AGENTRY_LIMIT_CHAIN_DEPTH=10, a leaf eight references deep takes a reference of its own', async () => {
    const deep = await startStack({ worker: false, env: { AGENTRY_LIMIT_CHAIN_DEPTH: '10' } });
    try {
      const post = (promptId: string, userPrompt: string) =>
        deep.api.post('/api/v1/prompts', { promptId, name: promptId, userPrompt });
      // q1 → q2 → … → q9, written leaf first.
      expect((await post('q9', 'leaf')).status).toBe(201);
      for (let i = 8; i >= 1; i--) expect((await post(`q${i}`, `{{prompt:q${i + 1}}}`)).status).toBe(201);
      expect((await post('q10', 'new leaf')).status).toBe(201);
      // q10 would sit at depth 9: within 10, although the walk up from q9 passes eight referrers.
      const res = await deep.api.put('/api/v1/prompts/q9', { userPrompt: 'leaf {{prompt:q10}}' });
      expect(res.status).toBe(200);
    } finally {
      await deep.stop();
    }
  });

  it('chain steps: 3 steps exceed AGENTRY_LIMIT_CHAIN_STEPS=2', async () => {
    const chain = {
      name: 'three steps',
      steps: [1, 2, 3].map((order) => ({ order, promptId: 's_one' })),
    };
    for (const [, s] of both())
      expect(
        (await s.api.post('/api/v1/prompts', { promptId: 's_one', name: 's_one', userPrompt: 'one' })).status,
      ).toBe(201);
    const res = await lowered.api.post('/api/v1/chains', chain);
    expect(res.status).toBe(400);
    expect(errorText(res.body)).toContain('steps must NOT have more than 2 items');
    expect((await defaults.api.post('/api/v1/chains', chain)).status).toBe(201);
  });
});

describe('§18 rendered prompt limit', () => {
  it('a 4500-byte rendered prompt exceeds AGENTRY_LIMIT_RENDERED_PROMPT_BYTES=4096, with no model call', async () => {
    const llm = await lowered.api.post('/llms', {
      name: 'main',
      endpoint: fake.url,
      model: 'main',
      api_key: 'k',
    });
    expect(llm.status).toBe(201);
    const res = await lowered.api.post(
      '/api/gateway/execute',
      { prompt: '{{v}}'.repeat(3), variables: { v: 'x'.repeat(1500) } },
      { 'x-llm-id': llm.body.id },
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: 'Rendered prompt is 4500 bytes; the limit is 4096 bytes',
    });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('§18 knowledge limits', () => {
  const pipelines = new Map<Stack, string>();
  beforeAll(async () => {
    for (const [name, s] of both())
      pipelines.set(s, (await seedPipeline(s.api, { name: `limits-${name}` })).pipelineId);
  });

  it('documents per batch: 3 documents exceed AGENTRY_LIMIT_DOCUMENTS_PER_BATCH=2', async () => {
    const documents = [1, 2, 3].map((i) => ({ content: `document ${i}`, classification: 'public' }));
    const res = await lowered.api.post(`/pipelines/${pipelines.get(lowered)}/documents:batch`, { documents });
    expect(res.status).toBe(400);
    expect(errorText(res.body)).toContain('documents must NOT have more than 2 items');
    const ok = await defaults.api.post(`/pipelines/${pipelines.get(defaults)}/documents:batch`, {
      documents,
    });
    expect(ok.status).toBe(202);
  });

  it('filter depth and k: a depth-3 filter and k 11 are 400s naming the limits', async () => {
    const search = { query: 'document', classification: 'public' };
    const filters = { $and: [{ $or: [{ kind: 'a' }, { kind: 'b' }] }] };
    const deep = await lowered.api.post(`/pipelines/${pipelines.get(lowered)}/search`, {
      ...search,
      filters,
    });
    expect(deep.status).toBe(400);
    expect(errorText(deep.body)).toContain('Filter depth exceeds the limit of 2');
    const k = await lowered.api.post(`/pipelines/${pipelines.get(lowered)}/search`, { ...search, k: 11 });
    expect(k.status).toBe(400);
    expect(errorText(k.body)).toContain('k must be <= 10');
    const ok = await defaults.api.post(`/pipelines/${pipelines.get(defaults)}/search`, {
      ...search,
      filters,
      k: 11,
    });
    expect(ok.status).toBe(200);
  });

  it('fragment length: chunk_size 501 exceeds AGENTRY_LIMIT_FRAGMENT_CHARS=500', async () => {
    const splitter = { name: 'wide', provider: 'recursive_character', parameters: { chunk_size: 501 } };
    const res = await lowered.api.post('/text_splitters', splitter);
    expect(res.status).toBe(400);
    expect(errorText(res.body)).toContain('chunk_size must be <= 500');
    expect((await defaults.api.post('/text_splitters', splitter)).status).toBe(201);
    // Without chunk_size, the default chunk size (1000) is lowered to the fragment limit.
    const plain = await lowered.api.post('/text_splitters', {
      name: 'plain',
      provider: 'recursive_character',
    });
    expect(plain.status).toBe(201);
    expect(plain.body.parameters).toMatchObject({ chunk_size: 500, chunk_overlap: 200 });
  });
});

describe('/openapi.json documents the configured limits', () => {
  it('chain steps, documents per batch, k and chunk_size', async () => {
    const openapi = (await lowered.api.get('/openapi.json')).body;
    const body = (path: string) =>
      openapi.paths[path].post.requestBody.content['application/json'].schema.properties;
    expect(body('/api/v1/chains').steps.maxItems).toBe(2);
    expect(body('/pipelines/{id}/documents:batch').documents.maxItems).toBe(2);
    expect(body('/pipelines/{id}/search').k.maximum).toBe(10);
    expect(body('/text_splitters').parameters.properties.chunk_size.maximum).toBe(500);
    expect(body('/agents').prompt.maxItems).toBe(2);
  });
});
