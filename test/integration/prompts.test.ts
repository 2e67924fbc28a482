// SPEC §12 through the API: the prompt library (PC-1, PC-2, PC-7), references checked at save
// time (PC-4, PC-6, PC-8), routing policies (PC-10) and the seed-002 error shape.
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;
let llmId: string;

beforeAll(async () => {
  stack = await startStack({ worker: false });
  llmId = (
    await stack.api.post('/llms', {
      name: 'fake',
      endpoint: 'http://127.0.0.1:9/v1',
      model: 'm',
      api_key: 'k',
    })
  ).body.id;
});

afterAll(async () => {
  await stack?.stop();
});

const create = (body: Record<string, unknown>) => stack.api.post('/api/v1/prompts', body);

describe('§12 prompt library', () => {
  it('PC-1/PC-2 seed 002: Contract Review with {{prompt:legal_guidelines}} is embeddable TEMPLATE', async () => {
    const guidelines = await create({
      promptId: 'legal_guidelines',
      name: 'Legal guidelines',
      userPrompt: 'Follow the company legal guidelines: cite clauses, flag liabilities.',
    });
    expect(guidelines.status).toBe(201);
    const res = await create({
      name: 'Contract Review',
      userPrompt: 'Review this contract: {{prompt:legal_guidelines}}',
      systemPrompt: 'You are a legal expert',
      temperature: 0.3,
      attachment: null,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      success: true,
      prompt: {
        name: 'Contract Review',
        isEmbeddable: true,
        executionMode: 'TEMPLATE',
        requiresAttachment: false,
        requiresDynamicData: false,
        embeddingBlockedReason: null,
        suggestedMode: 'TEMPLATE',
        warnings: [],
        systemPrompt: 'You are a legal expert',
        temperature: 0.3,
        attachment: null,
      },
    });
    expect(res.body.prompt.promptId).toMatch(/^prompt_[0-9a-f]{16}$/);
    expect(res.body.prompt.id).toMatch(/^[0-9a-f-]{36}$/);

    // The seed's PUT: a variable and an attachment make it not embeddable, with the seed's reason.
    const put = await stack.api.put(`/api/v1/prompts/${res.body.prompt.promptId}`, {
      userPrompt: 'Updated prompt with {{variable}}',
      attachment: { type: 'file', fileId: 'file_123' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      success: true,
      prompt: {
        isEmbeddable: false,
        embeddingBlockedReason:
          'Requires 1 runtime variable(s): variable; Prompt has file/URL attachment configured',
        requiresAttachment: true,
        requiresDynamicData: true,
        executionMode: 'TEMPLATE',
        systemPrompt: 'You are a legal expert',
      },
    });

    const list = await stack.api.get('/api/v1/prompts');
    expect(list.status).toBe(200);
    const listed = list.body.prompts.find((p: any) => p.promptId === res.body.prompt.promptId);
    expect(listed.embeddability).toEqual({
      isEmbeddable: false,
      executionMode: 'TEMPLATE',
      requiresAttachment: true,
      requiresDynamicData: true,
      blockedReason: 'Requires 1 runtime variable(s): variable; Prompt has file/URL attachment configured',
      suggestedMode: 'TEMPLATE',
      warnings: [],
    });
    const one = await stack.api.get(`/api/v1/prompts/${res.body.prompt.promptId}`);
    expect(one.body.prompt.userPrompt).toBe('Updated prompt with {{variable}}');
  });

  it('PC-2: every blocking condition in order, markers, explicit flags and temperature warnings', async () => {
    const res = await create({
      promptId: 'all-blockers',
      name: 'All blockers',
      systemPrompt: 'Use {{tone}} and [url]',
      userPrompt: 'Read [file] for {{name}} on {{date}} and {{name}} {{prompt:legal_guidelines}}',
      attachment: { type: 'url', url: 'https://example.com/a.pdf' },
      requiresAttachment: true,
      requiresDynamicData: true,
      temperature: 0.1,
    });
    expect(res.status).toBe(201);
    expect(res.body.prompt.embeddingBlockedReason).toBe(
      'Requires 3 runtime variable(s): tone, name, date; Prompt has file/URL attachment configured; ' +
        'Contains dynamic marker(s): [file], [url]; Marked as requiring dynamic data; Marked as requiring an attachment',
    );
    expect(res.body.prompt.warnings).toEqual(['Temperature 0.1 is below 0.3: consider EXECUTE mode']);
    const hot = await create({ name: 'Hot', userPrompt: 'Be creative', temperature: 1.5 });
    expect(hot.body.prompt.warnings).toEqual(['Temperature 1.5 is above 1.2: consider EXECUTE mode']);
    expect(hot.body.prompt.isEmbeddable).toBe(true);
    const routed = await create({ name: 'Routed', userPrompt: 'x', customGatewayId: llmId });
    expect(routed.body.prompt).toMatchObject({
      executionMode: 'EXECUTE',
      suggestedMode: 'EXECUTE',
      isEmbeddable: true,
    });
  });

  it('PC-7: reference errors at save time carry the seed shape with positions; nothing is stored', async () => {
    await create({ promptId: 'template_999', name: 'Needs vars', userPrompt: 'Hello {{name}} on {{date}}' });
    const text =
      'Generate a report for the quarter, following {{prompt:template_999}} and {{prompt:missing_one}}';
    const res = await create({ promptId: 'bad-refs', name: 'Bad refs', userPrompt: text });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: 'Invalid prompt references',
      details: [
        {
          promptId: 'template_999',
          reason: 'Prompt is not embeddable: Requires 2 runtime variable(s): name, date',
          position: text.indexOf('{{prompt:template_999}}'),
        },
        {
          promptId: 'missing_one',
          reason: 'Prompt missing_one not found',
          position: text.indexOf('{{prompt:missing_one}}'),
        },
      ],
    });
    expect((await stack.api.get('/api/v1/prompts/bad-refs')).status).toBe(404);
    const param = await create({
      name: 'Param',
      systemPrompt: 'ab {{prompt:legal_guidelines|x=1}}',
      userPrompt: 'u',
    });
    expect(param.status).toBe(400);
    expect(param.body.details).toEqual([
      {
        promptId: 'legal_guidelines',
        reason: 'Unknown reference parameter "x": only mode is supported',
        position: 3,
      },
    ]);
  });

  it('PC-6/PC-7: cycles are rejected at save time, and depth beyond 3', async () => {
    expect((await create({ promptId: 'c1', name: 'c1', userPrompt: 'one' })).status).toBe(201);
    expect((await create({ promptId: 'c2', name: 'c2', userPrompt: 'two {{prompt:c1}}' })).status).toBe(201);
    const cycle = await stack.api.put('/api/v1/prompts/c1', { userPrompt: 'one {{prompt:c2}}' });
    expect(cycle.status).toBe(400);
    // Seed 002's details name the referenced prompt at `position`: c2, whose reference closes the cycle.
    expect(cycle.body.details).toEqual([
      { promptId: 'c2', reason: 'Circular reference: c1 → c2 → c1', position: 4 },
    ]);
    expect((await stack.api.get('/api/v1/prompts/c1')).body.prompt.userPrompt).toBe('one');
    const self = await stack.api.put('/api/v1/prompts/c1', { userPrompt: '{{prompt:c1}}' });
    expect(self.body.details).toEqual([
      { promptId: 'c1', reason: 'Circular reference: c1 → c1', position: 0 },
    ]);
    expect((await create({ promptId: 'c3', name: 'c3', userPrompt: '{{prompt:c2}}' })).status).toBe(201);
    // d → c3 (1) → c2 (2) → c1 (3): allowed; e → d → c3 → c2 → c1 would reach depth 4.
    expect((await create({ promptId: 'd4', name: 'd4', userPrompt: '{{prompt:c3}}' })).status).toBe(201);
    const deep = await create({ promptId: 'e5', name: 'e5', userPrompt: 'x {{prompt:d4}}' });
    expect(deep.status).toBe(400);
    expect(deep.body.details).toEqual([
      { promptId: 'd4', reason: 'Maximum chain depth exceeded', position: 2 },
    ]);
  });

  it('PC-6: an update is refused when prompts above it would reach depth 4', async () => {
    const post = (promptId: string, userPrompt: string) =>
      create({ promptId, name: promptId, userPrompt }).then((r) => expect(r.status).toBe(201));
    await post('up_leaf', 'leaf');
    await post('up_mid', 'mid {{prompt:up_leaf}}');
    await post('up_top', 'top {{prompt:up_mid}}');
    await post('up_extra2', 'extra');
    await post('up_extra1', 'e {{prompt:up_extra2}}');
    // up_top → up_mid → up_leaf (depth 2) → up_extra1 (3) → up_extra2 (4).
    const res = await stack.api.put('/api/v1/prompts/up_leaf', { userPrompt: 'now {{prompt:up_extra1}}' });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      {
        promptId: 'up_extra1',
        reason: 'Maximum chain depth exceeded: up_leaf is itself referenced at depth 2',
        position: 4,
      },
    ]);
    expect(
      (await stack.api.put('/api/v1/prompts/up_leaf', { userPrompt: 'now {{prompt:up_extra2}}' })).status,
    ).toBe(200);
  });

  it('PC-8: a reference to a prompt the key cannot read is "not found"; grants by promptId work', async () => {
    await create({ promptId: 'secret-policy', name: 'Secret', userPrompt: 'internal policy' });
    const key = (
      await stack.api.post('/api_keys', {
        name: 'prompt-writer',
        permissions: ['write:prompts', 'read:prompts:legal_guidelines'],
      })
    ).body;
    const api = stack.api.as({ id: key.id, secret: key.secret });
    const denied = await api.post('/api/v1/prompts', {
      name: 'x',
      userPrompt: 'see {{prompt:secret-policy}}',
    });
    expect(denied.status).toBe(400);
    expect(denied.body.details).toEqual([
      { promptId: 'secret-policy', reason: 'Prompt secret-policy not found', position: 4 },
    ]);
    const ok = await api.post('/api/v1/prompts', {
      name: 'x',
      userPrompt: 'see {{prompt:legal_guidelines}}',
    });
    expect(ok.status).toBe(201);
    expect((await api.get('/api/v1/prompts/secret-policy')).status).toBe(404);
    const listed = (await api.get('/api/v1/prompts')).body.prompts.map((p: any) => p.promptId);
    expect(listed).toContain('legal_guidelines');
    expect(listed).not.toContain('secret-policy');
    const reader = (
      await stack.api.post('/api_keys', { name: 'prompt-reader', permissions: ['read:prompts'] })
    ).body;
    const forbidden = await stack.api.as({ id: reader.id, secret: reader.secret }).post('/api/v1/prompts', {
      name: 'y',
      userPrompt: 'y',
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.success).toBe(false);
  });

  it('PC-1: bad bodies are 400 in the seed shape; duplicate promptId 409; delete refused while referenced', async () => {
    for (const body of [
      { name: 'n' },
      { name: 'n', userPrompt: 'u', extra: 1 },
      { name: 'n', userPrompt: 'u', promptId: 'bad id' },
      { name: 'n', userPrompt: 'u', attachment: { type: 'ftp', url: 'x' } },
      { name: 'n', userPrompt: 'u', temperature: 3 },
      { name: 'n', userPrompt: 'u', routingPolicyId: '01890a5d-ac96-774b-bcce-b302099a8057' },
      { name: 'n', userPrompt: 'u', customGatewayId: '01890a5d-ac96-774b-bcce-b302099a8057' },
    ]) {
      const res = await create(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.success).toBe(false);
      expect(typeof res.body.error).toBe('string');
    }
    expect((await create({ promptId: 'legal_guidelines', name: 'again', userPrompt: 'u' })).status).toBe(409);
    const del = await stack.api.delete('/api/v1/prompts/legal_guidelines');
    expect(del.status).toBe(409);
    expect(del.body.error).toMatch(/^Prompt legal_guidelines is referenced by prompt /);
    expect((await stack.api.delete('/api/v1/prompts/c3')).status).toBe(409);
    expect((await stack.api.delete('/api/v1/prompts/e5')).status).toBe(404);
    expect((await stack.api.delete('/api/v1/prompts/d4')).status).toBe(204);
    expect((await stack.api.delete('/api/v1/prompts/c3')).status).toBe(204);
    expect((await stack.api.get('/api/v1/prompts/c3')).status).toBe(404);
  });
});

describe('§12 PC-10 routing policies', () => {
  it('create, list, get, update, and delete refused while a prompt uses it', async () => {
    const second = (
      await stack.api.post('/llms', {
        name: 'fake-2',
        endpoint: 'http://127.0.0.1:9/v1',
        model: 'm2',
        api_key: 'k',
      })
    ).body.id;
    const res = await stack.api.post('/api/v1/routing-policies', {
      name: 'primary-then-backup',
      llms: [llmId, second],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      success: true,
      routingPolicy: { name: 'primary-then-backup', llms: [llmId, second] },
    });
    const id = res.body.routingPolicy.id;
    expect((await stack.api.get('/api/v1/routing-policies')).body.routingPolicies).toHaveLength(1);
    expect((await stack.api.get(`/api/v1/routing-policies/${id}`)).body.routingPolicy.id).toBe(id);
    const bad = await stack.api.post('/api/v1/routing-policies', {
      name: 'bad',
      llms: ['01890a5d-ac96-774b-bcce-b302099a8057'],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('llms[0]: LLM 01890a5d-ac96-774b-bcce-b302099a8057 not found');
    expect(
      (await stack.api.post('/api/v1/routing-policies', { name: 'primary-then-backup', llms: [llmId] }))
        .status,
    ).toBe(409);
    const updated = await stack.api.put(`/api/v1/routing-policies/${id}`, { llms: [second, llmId] });
    expect(updated.body.routingPolicy.llms).toEqual([second, llmId]);
    const prompt = await create({ promptId: 'routed', name: 'Routed', userPrompt: 'r', routingPolicyId: id });
    expect(prompt.body.prompt.executionMode).toBe('EXECUTE');
    const del = await stack.api.delete(`/api/v1/routing-policies/${id}`);
    expect(del.status).toBe(409);
    expect(del.body.error).toBe(`Routing policy ${id} is used by prompt(s): routed`);
    await stack.api.put('/api/v1/prompts/routed', { routingPolicyId: null });
    expect((await stack.api.delete(`/api/v1/routing-policies/${id}`)).status).toBe(204);
    expect((await stack.api.get(`/api/v1/routing-policies/${id}`)).status).toBe(404);
  });

  it('PC-5: cache stats need admin', async () => {
    const stats = await stack.api.get('/api/v1/cache/stats');
    expect(stats.status).toBe(200);
    expect(stats.body).toEqual({
      hits: expect.any(Number),
      misses: expect.any(Number),
      entries: expect.any(Number),
      hitRate: expect.any(Number),
    });
    const reader = (
      await stack.api.post('/api_keys', { name: 'stats-reader', permissions: ['read:prompts'] })
    ).body;
    expect(
      (await stack.api.as({ id: reader.id, secret: reader.secret }).get('/api/v1/cache/stats')).status,
    ).toBe(403);
  });
});
