// SPEC §8 through the API: creation with every rule (AG-1..AG-9), materialised defaults (AG-8),
// updates and versions (AG-11), delete, lists and prompt inspection (§8.4).
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;

// Seed 000's example agent, verbatim.
const SUPPORT_ANSWERS = {
  name: 'support-answers',
  description: 'Answers support questions from the product knowledge base',
  prompt: [
    {
      role: 'system',
      template:
        'Answer using only the reference text. If the reference text does not contain the answer, say that the answer is not available.',
    },
    { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}' },
  ],
  placeholders: [
    { name: 'question', type: 'query' },
    { name: 'context', type: 'similarity', target: 'question', params: { k: 5 } },
  ],
};

const valid = (overrides: Record<string, unknown> = {}) => ({
  ...SUPPORT_ANSWERS,
  name: `agent-${Math.random().toString(36).slice(2)}`,
  ...overrides,
});

beforeAll(async () => {
  stack = await startStack({ worker: false });
});

afterAll(async () => {
  await stack?.stop();
});

describe('§8 agents', () => {
  it('seed 000: support-answers is created with every include and parameter materialised', async () => {
    const res = await stack.api.post('/agents', SUPPORT_ANSWERS);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'support-answers',
      version: 1,
      metadata: {},
      tools: [],
      prompt: [
        { role: 'system', include: true },
        { role: 'user', include: true },
      ],
      placeholders: [
        { name: 'question', type: 'query' },
        { name: 'context', type: 'similarity', target: 'question', params: { k: 5, threshold: null } },
      ],
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const dup = await stack.api.post('/agents', SUPPORT_ANSWERS);
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toBe('Agent name already exists: support-answers');
  });

  it('AG-1..AG-7, AG-9: each rule → 400 naming the problem, nothing stored', async () => {
    const before = (await stack.api.get('/agents?limit=100')).body.data.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ prompt: [{ role: 'user', template: '{question}{context}' }] }, 'system'],
      [{ prompt: [{ role: 'system', template: '{question}{context}' }] }, 'user'],
      [
        {
          prompt: [
            { role: 'system', template: 'x' },
            { role: 'user', template: '{question}{context}' },
            { role: 'assistant', template: 'y' },
          ],
        },
        'The last prompt message must have role user',
      ],
      [
        {
          prompt: [
            { role: 'system', template: 'x' },
            { role: 'user', template: '{foo} {question} {context}' },
          ],
        },
        'Unknown placeholder {foo} in prompt[1].template',
      ],
      [
        {
          placeholders: [
            { name: 'question', type: 'query' },
            { name: 'question', type: 'query' },
          ],
        },
        'question',
      ],
      [
        {
          placeholders: [
            { name: 'question', type: 'query' },
            { name: 'context', type: 'similarity', target: 'nothing' },
          ],
        },
        'nothing',
      ],
      [
        {
          placeholders: [
            { name: 'question', type: 'query' },
            { name: 'context', type: 'full_text', target: 'question' },
          ],
        },
        'not available as placeholders',
      ],
      [
        {
          placeholders: [
            { name: 'question', type: 'query', params: { k: 1 } },
            { name: 'context', type: 'similarity', target: 'question' },
          ],
        },
        'question',
      ],
      [{ metadata: { ui: 'not an object' } }, 'metadata'],
    ];
    for (const [overrides, message] of cases) {
      const res = await stack.api.post('/agents', valid(overrides));
      expect({ overrides, status: res.status }).toEqual({ overrides, status: 400 });
      expect(res.body.detail).toContain(message);
    }
    expect((await stack.api.get('/agents?limit=100')).body.data.length).toBe(before);
  });

  it('AG-8: the params quirk: defaults without params, 0 for omitted numbers with params, k = 0 rejected', async () => {
    const mmr = await stack.api.post(
      '/agents',
      valid({
        placeholders: [
          { name: 'question', type: 'query' },
          { name: 'context', type: 'mmr', target: 'question', params: { k: 3 } },
        ],
      }),
    );
    expect(mmr.body.placeholders[1].params).toEqual({ k: 3, fetch_k: 0, lambda_mult: 0, threshold: null });
    const defaults = await stack.api.post(
      '/agents',
      valid({
        placeholders: [
          { name: 'question', type: 'query' },
          { name: 'context', type: 'mmr', target: 'question' },
        ],
      }),
    );
    expect(defaults.body.placeholders[1].params).toEqual({
      k: 5,
      fetch_k: 10,
      lambda_mult: 0.5,
      threshold: null,
    });
    const empty = await stack.api.post(
      '/agents',
      valid({
        placeholders: [
          { name: 'question', type: 'query' },
          { name: 'context', type: 'similarity', target: 'question', params: {} },
        ],
      }),
    );
    expect(empty.status).toBe(400);
    expect(empty.body.detail).toContain('Placeholder context: k must be at least 1');
    const foreign = await stack.api.post(
      '/agents',
      valid({
        placeholders: [
          { name: 'question', type: 'query' },
          { name: 'context', type: 'similarity', target: 'question', params: { k: 2, fetch_k: 4 } },
        ],
      }),
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body.detail).toContain('fetch_k');
  });

  it('AG-11: updates change named fields, validate the merge, bump the version and keep old versions readable', async () => {
    const created = (await stack.api.post('/agents', valid({ description: 'first' }))).body;
    const renamed = await stack.api.patch(`/agents/${created.id}`, {
      description: null,
      metadata: { ui: { color: 'blue' } },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      version: 2,
      description: null,
      metadata: { ui: { color: 'blue' } },
      prompt: created.prompt,
    });
    const broken = await stack.api.patch(`/agents/${created.id}`, {
      placeholders: [{ name: 'question', type: 'query' }],
    });
    expect(broken.status).toBe(400);
    expect(broken.body.detail).toContain('Unknown placeholder {context}');
    expect((await stack.api.get(`/agents/${created.id}`)).body.version).toBe(2);
    const nulled = await stack.api.patch(`/agents/${created.id}`, { prompt: null });
    expect(nulled.status).toBe(400);
    const v1 = await stack.api.get(`/agents/${created.id}/versions/1`);
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({ id: created.id, version: 1, description: 'first', metadata: {} });
    expect((await stack.api.get(`/agents/${created.id}/versions/3`)).status).toBe(404);
    expect((await stack.api.get(`/agents/${created.id}/versions/abc`)).status).toBe(404);
  });

  it('§8.4: prompt inspection returns templates unsubstituted and the query placeholders in order', async () => {
    const created = (
      await stack.api.post(
        '/agents',
        valid({
          prompt: [
            { role: 'system', template: 'Be brief.' },
            { role: 'assistant', template: 'old', include: false },
            { role: 'user', template: '{topic}: {question} {context}' },
          ],
          placeholders: [
            { name: 'question', type: 'query' },
            { name: 'context', type: 'similarity', target: 'topic' },
            { name: 'topic', type: 'query' },
          ],
        }),
      )
    ).body;
    const res = await stack.api.get(`/agents/${created.id}/prompt`);
    expect(res.status).toBe(200);
    expect(res.body.input_variables).toEqual(['question', 'topic']);
    expect(res.body.prompt[1]).toEqual({ role: 'assistant', template: 'old', include: false });
    expect(res.body.prompt[2].template).toBe('{topic}: {question} {context}');
  });

  it('§8.3: delete answers 204, then reads and versions answer 404; lists filter by name and show only readable agents', async () => {
    const created = (await stack.api.post('/agents', valid({ name: 'doomed-agent' }))).body;
    const listed = await stack.api.get('/agents?name$startswith=doomed');
    expect(listed.body.data.map((a: any) => a.id)).toEqual([created.id]);
    expect((await stack.api.delete(`/agents/${created.id}`)).status).toBe(204);
    expect((await stack.api.get(`/agents/${created.id}`)).status).toBe(404);
    expect((await stack.api.get(`/agents/${created.id}/versions/1`)).status).toBe(404);
    expect((await stack.api.get(`/agents/${created.id}/prompt`)).status).toBe(404);

    const key = await stack.api.post('/api_keys', { name: 'agent-writer', permissions: ['write:agents'] });
    const writer = stack.api.as({ id: key.body.id, secret: key.body.secret });
    const own = await writer.post('/agents', valid({ name: 'writers-own' }));
    expect(own.status).toBe(201);
    expect((await writer.get('/agents?limit=100')).body.data.map((a: any) => a.name)).toEqual([
      'writers-own',
    ]);
  });
});
