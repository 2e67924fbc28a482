// SPEC §12 at execution: the gateway (PC-9) with TEMPLATE and EXECUTE references (PC-3..PC-6), the
// EXECUTE cache (PC-5), routing fallback (PC-10), internal execution records and the seed's
// monitoring queries (PC-11), agent templates with references and system variables (PC-12, §14).
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { parseNdjson } from '../helpers/http';
import { startStack, type Stack } from '../helpers/stack';
import { until, waitFor } from '../helpers/wait';

let stack: Stack;
let fake: FakeModelServer;
let llmId: string;
let execLlmId: string;

const userInput = (model: string, n = 0): string => {
  const body = fake.requestsFor(model)[n]!.body as { input: { content: unknown }[] };
  return JSON.stringify(body.input);
};

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  const llm = (m: string) =>
    stack.api.post('/llms', { name: `llm-${m}`, endpoint: fake.url, model: m, api_key: 'k' });
  llmId = (await llm('main')).body.id;
  execLlmId = (await llm('exec')).body.id;
  await stack.api.post('/api/v1/prompts', { promptId: 'prompt_parent', name: 'Parent', userPrompt: 'p' });
  await stack.api.post('/api/v1/prompts', {
    promptId: 'template_123',
    name: 'Report Template',
    userPrompt: 'Sections: summary, risks, next steps.',
  });
  await stack.api.post('/api/v1/prompts', {
    promptId: 'market_outlook',
    name: 'Market outlook',
    userPrompt: 'Write a one-line market outlook.',
    customGatewayId: execLlmId,
  });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

const gateway = (body: Record<string, unknown>, headers: Record<string, string> = { 'x-llm-id': llmId }) =>
  stack.api.post('/api/gateway/execute', body, headers);

describe('§12 PC-9 gateway execute', () => {
  it('seed 002: a TEMPLATE reference is injected and reported in executionChain', async () => {
    fake.script('main', { text: 'The report.' });
    const res = await gateway({
      prompt: 'Generate report using {{prompt:template_123}}',
      sourcePromptId: 'prompt_parent',
      temperature: 0.7,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      response: 'The report.',
      executionChain: [
        {
          promptId: 'template_123',
          promptName: 'Report Template',
          depth: 1,
          executionMode: 'TEMPLATE',
          response: 'Sections: summary, risks, next steps.',
          cached: false,
        },
      ],
      referenceErrors: [],
    });
    expect(fake.requests).toHaveLength(1);
    expect(userInput('main')).toContain('Generate report using Sections: summary, risks, next steps.');
    expect(fake.requests[0]!.body).toMatchObject({ temperature: 0.7 });
  });

  it('PC-5: an EXECUTE reference runs as a child on its routed LLM, is cached, and saving the prompt clears the cache', async () => {
    fake.script('exec', { text: 'Markets calm.' });
    fake.script('main', { text: 'Final.' });
    const run = () => gateway({ prompt: 'Outlook: {{prompt:market_outlook}}. Summarise.' });
    const first = await run();
    expect(first.status).toBe(200);
    expect(first.body.executionChain).toEqual([
      {
        promptId: 'market_outlook',
        promptName: 'Market outlook',
        depth: 1,
        executionMode: 'EXECUTE',
        response: 'Markets calm.',
        cached: false,
      },
    ]);
    expect(fake.requestsFor('exec')).toHaveLength(1);
    expect(userInput('main')).toContain('Outlook: Markets calm.. Summarise.');

    const second = await run();
    expect(second.body.executionChain[0]).toMatchObject({ response: 'Markets calm.', cached: true });
    expect(fake.requestsFor('exec')).toHaveLength(1); // no model call for the cached reference
    expect(fake.requestsFor('main')).toHaveLength(2);
    const stats = (await stack.api.get('/api/v1/cache/stats')).body;
    expect(stats.hits).toBeGreaterThanOrEqual(1);
    expect(stats.entries).toBeGreaterThanOrEqual(1);

    const saved = await stack.api.put('/api/v1/prompts/market_outlook', { name: 'Market outlook' });
    expect(saved.status).toBe(200);
    const third = await run();
    expect(third.body.executionChain[0].cached).toBe(false);
    expect(fake.requestsFor('exec')).toHaveLength(2);

    // PC-11: internal executions are recorded; seed 002's monitoring queries run verbatim.
    const internal = await stack.rt.db.raw(`SELECT
  COUNT(*) as internal_count,
  AVG(executionTimeMs) as avg_latency,
  SUM(CASE WHEN selectedProvider = 'cache' THEN 1 ELSE 0 END) as cache_hits
FROM anonymous_executions
WHERE isInternal = true
  AND executedAt > NOW() - INTERVAL '24 hours';`);
    expect(Number(internal.rows[0].internal_count)).toBe(3);
    expect(Number(internal.rows[0].cache_hits)).toBe(1);
    expect(internal.rows[0].avg_latency).not.toBeNull();
    const attribution = await stack.rt.db.raw(`SELECT
  parentExecutionId,
  COUNT(*) as child_executions,
  SUM(executionTimeMs) as total_latency
FROM anonymous_executions
WHERE isInternal = true
GROUP BY parentExecutionId;`);
    expect(attribution.rows).toHaveLength(3);
    for (const row of attribution.rows) expect(Number(row.child_executions)).toBe(1);
    const records = await stack.rt.db('executions').where({ is_internal: true }).orderBy('started_at');
    expect(
      records.map((r: any) => [r.kind, r.chain_depth, r.referenced_prompt_id, r.selected_provider]),
    ).toEqual([
      ['reference', 1, 'market_outlook', 'custom'],
      ['reference', 1, 'market_outlook', 'cache'],
      ['reference', 1, 'market_outlook', 'custom'],
    ]);
  });

  it('PC-9: {{name}} variables, unresolved ones (400), reference errors reported and left unresolved', async () => {
    fake.script('main', { text: 'ok' });
    const missing = await gateway({ prompt: 'Hello {{name}} on {{day}}', variables: { name: 'Ada' } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ success: false, error: 'Unresolved variable(s): day' });
    const res = await gateway({
      prompt: 'Hello {{name}} and {{prompt:nowhere}}',
      variables: { name: '{{prompt:template_123}}' },
    });
    expect(res.status).toBe(200);
    expect(res.body.referenceErrors).toEqual([
      { promptId: 'nowhere', reason: 'Prompt nowhere not found', position: 19 },
    ]);
    // A value is never scanned for references (single pass), and the failed reference stays as written.
    expect(userInput('main')).toContain('Hello {{prompt:template_123}} and {{prompt:nowhere}}');
    expect(fake.requests).toHaveLength(1);
  });

  it('PC-6: depth beyond 3 fails with the seed message before any model call', async () => {
    for (const [id, text] of [
      ['deep4', 'bottom'],
      ['deep3', '{{prompt:deep4}}'],
      ['deep2', '{{prompt:deep3}}'],
      ['deep1', '{{prompt:deep2}}'],
    ] as const)
      expect(
        (await stack.api.post('/api/v1/prompts', { promptId: id, name: id, userPrompt: text })).status,
      ).toBe(201);
    const res = await gateway({ prompt: 'Run {{prompt:deep1}}' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: 'Failed to execute [deep4]: Maximum chain depth exceeded',
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('PC-9: with stream the final NDJSON done event carries executionChain and referenceErrors', async () => {
    fake.script('main', { text: 'Streamed answer' });
    const res = await gateway({ prompt: 'Use {{prompt:template_123}}', stream: true });
    expect(res.status).toBe(200);
    const events = parseNdjson(res.text);
    const done = events[events.length - 1];
    expect(done).toMatchObject({
      type: 'done',
      executionChain: [{ promptId: 'template_123', executionMode: 'TEMPLATE', depth: 1 }],
      referenceErrors: [],
    });
    expect(
      events
        .filter((e) => e.type === 'delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Streamed answer');
  });

  it('PC-9: no LLM → 400; execute:prompts is required', async () => {
    const res = await gateway({ prompt: 'x' }, {});
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^No LLM for this execution/);
    const key = (await stack.api.post('/api_keys', { name: 'no-exec', permissions: ['read:prompts'] })).body;
    const denied = await stack.api
      .as({ id: key.id, secret: key.secret })
      .post('/api/gateway/execute', { prompt: 'x' }, { 'x-llm-id': llmId });
    expect(denied.status).toBe(403);
  });

  it('PC-10: a routing policy falls back to the next LLM after the first fails through its retries', async () => {
    const bad = (
      await stack.api.post('/llms', { name: 'llm-bad', endpoint: fake.url, model: 'bad', api_key: 'k' })
    ).body.id;
    fake.script('bad', { failFirst: { count: 100, status: 500 } });
    fake.script('main', { text: 'Backup answered.' });
    const policy = (
      await stack.api.post('/api/v1/routing-policies', { name: 'fallback', llms: [bad, llmId] })
    ).body;
    await stack.api.post('/api/v1/prompts', {
      promptId: 'routed-source',
      name: 'Routed source',
      userPrompt: 'r',
      routingPolicyId: policy.routingPolicy.id,
    });
    const res = await gateway({ prompt: 'Say it', sourcePromptId: 'routed-source' }, {});
    expect(res.status).toBe(200);
    expect(res.body.response).toBe('Backup answered.');
    expect(fake.requestsFor('bad')).toHaveLength(4); // AGENTRY_LLM_MAX_ATTEMPTS
    expect(fake.requestsFor('main')).toHaveLength(1);
  });
});

describe('§12 review cases', () => {
  it('PC-9: variable names are own properties only ({{constructor}}, {{__proto__}} → 400), sourcePromptId is always checked', async () => {
    for (const name of ['constructor', '__proto__', 'toString']) {
      const res = await gateway({ prompt: `Hello {{${name}}}` });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: `Unresolved variable(s): ${name}` });
    }
    const unknown = await gateway({ prompt: 'x', sourcePromptId: 'no_such_prompt' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('sourcePromptId: Prompt no_such_prompt not found');
    expect(fake.requests).toHaveLength(0);
  });

  it('PC-3: |mode=template injects a routed prompt instead of executing it', async () => {
    fake.script('main', { text: 'ok' });
    const res = await gateway({ prompt: 'T: {{prompt:market_outlook|mode=template}}' });
    expect(res.status).toBe(200);
    expect(res.body.executionChain).toEqual([
      expect.objectContaining({ promptId: 'market_outlook', executionMode: 'TEMPLATE', cached: false }),
    ]);
    expect(fake.requestsFor('exec')).toHaveLength(0);
    expect(userInput('main')).toContain('T: Write a one-line market outlook.');
  });

  it('PC-5: updating a prompt executed below a cached EXECUTE answer invalidates it', async () => {
    fake.script('exec', { text: 'leaf answer' });
    fake.script('main', { text: 'top answer' });
    const post = (body: Record<string, unknown>) => stack.api.post('/api/v1/prompts', body);
    expect(
      (await post({ promptId: 'nest_leaf', name: 'Leaf', userPrompt: 'Leaf v1', customGatewayId: execLlmId }))
        .status,
    ).toBe(201);
    expect(
      (
        await post({
          promptId: 'nest_mid',
          name: 'Mid',
          userPrompt: 'Mid says {{prompt:nest_leaf}}',
          customGatewayId: execLlmId,
        })
      ).status,
    ).toBe(201);
    const run = () => gateway({ prompt: 'Top {{prompt:nest_mid}}' });
    expect((await run()).body.executionChain[0]).toMatchObject({ promptId: 'nest_mid', cached: false });
    expect((await run()).body.executionChain[0]).toMatchObject({ promptId: 'nest_mid', cached: true });
    const callsBefore = fake.requestsFor('exec').length;
    expect((await stack.api.put('/api/v1/prompts/nest_leaf', { userPrompt: 'Leaf v2' })).status).toBe(200);
    const after = await run();
    expect(after.body.executionChain[0]).toMatchObject({ promptId: 'nest_mid', cached: false });
    // The mid prompt and the updated leaf both ran again; the leaf with its new text.
    expect(fake.requestsFor('exec').length).toBe(callsBefore + 2);
    expect(JSON.stringify(fake.requestsFor('exec').map((r) => r.body))).toContain('Leaf v2');
  });
});

describe('DX-4 Idempotency-Key on the gateway', () => {
  it('the same key and body attach to one execution (one model call); another body → 409', async () => {
    fake.script('main', { text: 'Idempotent answer.' });
    const headers = { 'x-llm-id': llmId, 'Idempotency-Key': 'gw-key-1' };
    const first = await gateway({ prompt: 'Once only' }, headers);
    const again = await gateway({ prompt: 'Once only' }, headers);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('x-agentry-execution-id')).toBe(first.headers.get('x-agentry-execution-id'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(fake.requestsFor('main')).toHaveLength(1);
    const other = await gateway({ prompt: 'Something else' }, headers);
    expect(other.status).toBe(409);
    expect(other.body.success).toBe(false);
    expect(fake.requestsFor('main')).toHaveLength(1);
  });
});

describe('DX-3 cancellation reaches child workflows', () => {
  it('DELETE on a gateway execution cancels its EXECUTE child: the child model request is aborted', async () => {
    fake.script('exec', { text: 'slow words '.repeat(300), deltaDelayMs: 200 });
    // A fresh prompt (the cache of market_outlook may hold an answer).
    await stack.api.post('/api/v1/prompts', {
      promptId: 'slow_brief',
      name: 'Slow brief',
      userPrompt: 'Write a long brief.',
      customGatewayId: execLlmId,
    });
    // EX-7: the response is held until the first event, which comes after the child: read ids
    // from the records while the request is pending.
    const live = fetch(`${stack.url}/api/gateway/execute`, {
      method: 'POST',
      headers: stack.api.headers({ 'content-type': 'application/json', 'x-llm-id': llmId }),
      body: JSON.stringify({ prompt: 'Brief: {{prompt:slow_brief}}', stream: true }),
    });
    await waitFor(() => fake.requestsFor('exec').length > 0, { what: 'the child model request' });
    expect(fake.requestsFor('exec')).toHaveLength(1);
    const { parent_execution_id: id } = await stack.rt
      .db('executions')
      .where({ referenced_prompt_id: 'slow_brief' })
      .first('parent_execution_id');

    expect((await stack.api.delete(`/executions/${id}`)).status).toBe(202);
    // Well before the stream's natural end: the cancel aborted it (DX-3 measures how soon).
    await waitFor(() => fake.requestsFor('exec')[0]!.aborted, {
      what: 'the child model request to be aborted',
    });
    const res = await live;
    expect(res.status).toBe(499);
    expect(await res.json()).toEqual({ success: false, error: 'Execution cancelled' });
    expect(res.headers.get('x-agentry-execution-id')).toBe(id);
    expect(fake.requestsFor('main')).toHaveLength(0);
    const child = await until(
      async () => {
        const row = await stack.rt.db('executions').where({ parent_execution_id: id }).first();
        return row?.status !== 'running' ? row : undefined;
      },
      { what: 'the child execution to finish' },
    );
    expect(child).toMatchObject({
      kind: 'reference',
      status: 'cancelled',
      referenced_prompt_id: 'slow_brief',
    });
  });
});

describe('§18 rendered prompt limit', () => {
  it('a rendered prompt over 2 MB is a 400 naming the limit, with no model call', async () => {
    const big = 'x'.repeat(90 * 1024);
    const res = await gateway({
      prompt: '{{v}}'.repeat(25),
      variables: { v: big },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: `Rendered prompt is ${25 * 90 * 1024} bytes; the limit is 2097152 bytes`,
    });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('§12 PC-12 and §14 in agent templates', () => {
  it('an agent template injects a stored prompt and resolves system variables on the workflow clock', async () => {
    fake.script('main', { text: 'Agent answer.' });
    const agent = await stack.api.post('/agents', {
      name: 'with-references',
      prompt: [
        {
          role: 'system',
          template: 'Today is {{foundationallm:current_datetime_utc:yyyy-MM-dd}}. {{prompt:template_123}}',
        },
        { role: 'user', template: '{question}' },
      ],
      placeholders: [{ name: 'question', type: 'query' }],
    });
    expect(agent.status).toBe(201);
    const bad = await stack.api.post('/agents', {
      name: 'bad-reference',
      prompt: [
        { role: 'system', template: 'x {{prompt:nowhere}}' },
        { role: 'user', template: '{question}' },
      ],
      placeholders: [{ name: 'question', type: 'query' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({
      type: 'invalid_reference',
      path: 'prompt[0].template',
      promptId: 'nowhere',
      position: 2,
    });

    const model = await stack.api.post('/embedding_models', { name: 'hash', provider: 'hash', size: 16 });
    const splitter = await stack.api.post('/text_splitters', {
      name: 'chars',
      provider: 'character',
      parameters: { separator: '\n', chunk_size: 100, chunk_overlap: 0 },
    });
    const pipeline = await stack.api.post('/pipelines', {
      name: 'p',
      embedding_model_id: model.body.id,
      text_splitter_id: splitter.body.id,
      classifications: [{ name: 'public' }],
    });
    const res = await stack.api.post(
      `/agents/${agent.body.id}/execute`,
      {
        prompt: { question: 'What now? {{foundationallm:current_datetime_utc}}' },
        classification: 'public',
        stream: false,
      },
      { 'x-pipeline-id': pipeline.body.id, 'x-llm-id': llmId },
    );
    expect(res.status).toBe(200);
    expect(res.text).toBe('Agent answer.');
    const sent = fake.requestsFor('main')[0]!.body as { instructions: string; input: { content: string }[] };
    const record = await stack.rt.db('executions').where({ kind: 'agent' }).first();
    const day = new Date(record.variables_instant).toISOString().slice(0, 10);
    expect(sent.instructions).toBe(`Today is ${day}. Sections: summary, risks, next steps.`);
    // PV-1: never resolved inside input values.
    expect(sent.input[0]!.content).toBe('What now? {{foundationallm:current_datetime_utc}}');
    expect(record.variables_resolved).toEqual(['current_datetime_utc']);
    // The agent references the prompt: deleting it is refused (PC-1).
    expect((await stack.api.delete('/api/v1/prompts/template_123')).status).toBe(409);
  });

  it('PV-6 and PC-8 at execution: variables of injected prompts are recorded; a key without execute on an EXECUTE reference gets 400', async () => {
    fake.script('main', { text: 'ok' });
    await stack.api.post('/api/v1/prompts', {
      promptId: 'dated_note',
      name: 'Dated',
      userPrompt: 'Year {{foundationallm:current_datetime_utc:yyyy}}',
    });
    const agent = await stack.api.post('/agents', {
      name: 'injects-dated',
      prompt: [
        { role: 'system', template: 'S {{prompt:dated_note}} / {{prompt:market_outlook}}' },
        { role: 'user', template: '{question}' },
      ],
      placeholders: [{ name: 'question', type: 'query' }],
    });
    expect(agent.status).toBe(201);
    const model = await stack.api.post('/embedding_models', { name: 'hash-2', provider: 'hash', size: 16 });
    const splitter = await stack.api.post('/text_splitters', {
      name: 'chars-2',
      provider: 'character',
      parameters: {},
    });
    const pipeline = await stack.api.post('/pipelines', {
      name: 'p2',
      embedding_model_id: model.body.id,
      text_splitter_id: splitter.body.id,
      classifications: [{ name: 'public' }],
    });
    const body = { prompt: { question: 'q' }, classification: 'public', stream: false };
    const headers = { 'x-pipeline-id': pipeline.body.id, 'x-llm-id': llmId };
    const res = await stack.api.post(`/agents/${agent.body.id}/execute`, body, headers);
    expect(res.status).toBe(200);
    const record = await stack.rt.db('executions').where({ kind: 'agent', agent_id: agent.body.id }).first();
    const year = new Date(record.variables_instant).toISOString().slice(0, 4);
    // market_outlook's answer may come from the cache of an earlier test (PC-5): any answer.
    const instructions = (fake.requestsFor('main')[0]!.body as { instructions: string }).instructions;
    expect(instructions.startsWith(`S Year ${year} / `)).toBe(true);
    expect(instructions.length).toBeGreaterThan(`S Year ${year} / `.length);
    expect(record.variables_resolved).toEqual(['current_datetime_utc']);

    // PC-8: reading the prompts is not enough to execute the routed one.
    const key = (
      await stack.api.post('/api_keys', {
        name: 'reads-prompts-only',
        permissions: ['execute:agents', 'execute:pipelines', 'execute:llms', 'read:prompts'],
      })
    ).body;
    const denied = await stack.api
      .as({ id: key.id, secret: key.secret })
      .post(`/agents/${agent.body.id}/execute`, body, headers);
    expect(denied.status).toBe(400);
    expect(denied.body.errors).toEqual([
      expect.objectContaining({
        type: 'invalid_reference',
        promptId: 'market_outlook',
        message: 'Prompt market_outlook not found',
      }),
    ]);
  });
});
