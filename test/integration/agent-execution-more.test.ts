// More of SPEC §8–§11 through the API with a real worker: the three response formats of §9.5
// for agents, EX-7 (status before the first byte, in-band errors after it), the §10 dry-run
// property (dry-run fragments = traced fragments), TR-2 (trace TTL, reads do not extend it),
// deleted agents and recorded agent versions (AG-11, §9.3 step 7) and DX-5 search attributes.
import fc from 'fast-check';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { answerOf, parseNdjson, parseSse } from '../helpers/http';
import { documentsReady } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';
import { until } from '../helpers/wait';

let stack: Stack;
let fake: FakeModelServer;
let pipelineId: string;
let agentId: string;
const llms: Record<string, string> = {};

const VOCABULARY = [
  'database',
  'credentials',
  'rotate',
  'vault',
  'backup',
  'restore',
  'cluster',
  'network',
  'firewall',
  'payroll',
  'holiday',
  'invoice',
  'deploy',
  'release',
  'monitor',
  'alert',
];

/** Distinct lines of vocabulary words: with the `lines` splitter each becomes one fragment. */
const lineOf = (i: number): string =>
  `Note ${i}: ${[0, 1, 2, 3].map((j) => VOCABULARY[(i * 5 + j * 3 + j * j) % VOCABULARY.length]).join(' ')}.`;

const DOCUMENTS = [
  { classification: 'public', metadata: { team: 'ops', year: 2021 } },
  { classification: 'public', metadata: { team: 'dev', year: 2023 } },
  { classification: 'internal', metadata: { team: 'ops', year: 2024 } },
  { classification: 'internal', metadata: { team: 'dev', year: 2022 } },
  { classification: 'hr', metadata: { team: 'hr', year: 2023 } },
  { classification: 'hr', metadata: { year: 2020 } },
].map((d, n) => ({ ...d, content: [0, 1, 2, 3, 4].map((i) => lineOf(n * 5 + i)).join('\n') }));

/** Two query placeholders, a similarity and an MMR placeholder, and an excluded message. */
const AGENT = {
  name: 'more-answers',
  prompt: [
    { role: 'system', template: 'Answer from the notes only.' },
    { role: 'assistant', template: 'Excluded {topic}', include: false },
    {
      role: 'user',
      template: 'Notes:\n{context}\n\nRelated:\n{related}\n\nTopic: {topic}\nQuestion: {question}',
    },
  ],
  placeholders: [
    { name: 'question', type: 'query' },
    { name: 'topic', type: 'query' },
    { name: 'context', type: 'similarity', target: 'question', params: { k: 3 } },
    { name: 'related', type: 'mmr', target: 'topic', params: { k: 2, fetch_k: 6, lambda_mult: 0.5 } },
  ],
};

async function ingest(s: Stack, pipeline: string, doc: Record<string, unknown>): Promise<string> {
  const res = await s.api.post(`/pipelines/${pipeline}/documents`, doc);
  expect(res.status).toBe(202);
  return res.body.id as string;
}

/** A hash-embedder pipeline `kb` with the levels internal ⊃ public and hr. */
async function setUpPipeline(s: Stack): Promise<string> {
  const model = await s.api.post('/embedding_models', { name: 'hash', provider: 'hash', size: 128 });
  const splitter = await s.api.post('/text_splitters', {
    name: 'lines',
    provider: 'character',
    parameters: { separator: '\n', chunk_size: 60, chunk_overlap: 0 },
  });
  const pipeline = await s.api.post('/pipelines', {
    name: 'kb',
    embedding_model_id: model.body.id,
    text_splitter_id: splitter.body.id,
    classifications: [{ name: 'internal', includes: ['public'] }, { name: 'public' }, { name: 'hr' }],
  });
  expect(pipeline.status).toBe(201);
  return pipeline.body.id as string;
}

async function registerLlm(s: Stack, model: string): Promise<string> {
  const res = await s.api.post('/llms', { name: `llm-${model}`, endpoint: fake.url, model, api_key: 'sk-x' });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const headersFor = (model: string) => ({ 'x-pipeline-id': pipelineId, 'x-llm-id': llms[model]! });
const execute = (body: unknown, model = 'm', id = agentId) =>
  stack.api.post(`/agents/${id}/execute`, body, headersFor(model));
const dryRun = (body: unknown, id = agentId) =>
  stack.api.post(`/agents/${id}/search`, body, { 'x-pipeline-id': pipelineId });
const BODY = {
  prompt: { question: 'rotate database credentials', topic: 'backup restore' },
  classification: 'internal',
};

/** The execution record once its workflow closed. */
async function settledRecord(s: Stack, executionId: string) {
  await s.temporal.workflow
    .getHandle(`execution-${executionId}`)
    .result()
    .catch(() => undefined);
  return s.rt.executions.get(executionId);
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  pipelineId = await setUpPipeline(stack);
  for (const model of ['m', 'fail400', 'drop']) llms[model] = await registerLlm(stack, model);
  const agent = await stack.api.post('/agents', AGENT);
  expect(agent.status).toBe(201);
  agentId = agent.body.id as string;
  const ids: string[] = [];
  for (const doc of DOCUMENTS) ids.push(await ingest(stack, pipelineId, doc));
  await documentsReady(stack.api, pipelineId, ids);
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

describe('§9.5 response formats of an agent execution', () => {
  it('§9.5: NDJSON by default: deltas numbered from 1, exactly one terminal done with usage', async () => {
    fake.script('m', { text: 'Rotate with the vault command' });
    const res = await execute(BODY);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    expect(res.headers.get('x-agentry-execution-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-foundation4ai-tracing-id')).toBeNull();
    const events = parseNdjson(res.text);
    expect(answerOf(events)).toBe('Rotate with the vault command');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'delta').every((e) => e.attempt === 1)).toBe(true);
    expect(events.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
    expect(events[events.length - 1]).toMatchObject({
      type: 'done',
      attempt: 1,
      usage: { input_tokens: expect.any(Number), output_tokens: 5 },
    });
    // `stream: true` and `"ndjson"` are the same format.
    for (const stream of [true, 'ndjson']) {
      const again = await execute({ ...BODY, stream });
      expect(again.headers.get('content-type')).toContain('application/x-ndjson');
      expect(answerOf(parseNdjson(again.text))).toBe('Rotate with the vault command');
    }
  });

  it('§9.5: "stream": "sse" answers server-sent events with id, event and data lines', async () => {
    fake.script('m', { text: 'Use the vault' });
    const res = await execute({ ...BODY, stream: 'sse', tracing: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    // A streamed execution carries the trace id too, and the trace is readable.
    const traceId = res.headers.get('x-foundation4ai-tracing-id');
    expect(traceId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await stack.api.get(`/tracing/${traceId}`)).body.inputs).toEqual(BODY.prompt);
    const messages = parseSse(res.text).filter((m) => m.comment === undefined);
    expect(messages.length).toBeGreaterThanOrEqual(2);
    for (const m of messages) {
      const event = JSON.parse(m.data!);
      expect(m.id).toBe(String(event.seq));
      expect(m.event).toBe(event.type);
    }
    const events = messages.map((m) => JSON.parse(m.data!));
    expect(answerOf(events)).toBe('Use the vault');
    expect(events[events.length - 1].type).toBe('done');
    expect(res.text).toMatch(
      /^id: 1\nevent: delta\ndata: \{"type":"delta","seq":1,"attempt":1,"text":"Use"\}\n\n/,
    );
  });

  it('§9.5: "stream": false answers the complete answer as text/plain', async () => {
    fake.script('m', { text: 'The whole answer at once.' });
    const res = await execute({ ...BODY, stream: false });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('The whole answer at once.');
    expect(res.headers.get('x-agentry-execution-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('EX-7: the status is decided before the first byte', () => {
  it('EX-7: a model failure before the first byte → 502 JSON naming the upstream status and message', async () => {
    fake.script('fail400', { failFirst: { count: 10, status: 400, message: 'Unsupported parameter' } });
    for (const stream of [undefined, 'sse', false]) {
      const res = await execute(stream === undefined ? BODY : { ...BODY, stream }, 'fail400');
      expect(res.status).toBe(502);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.body.detail).toContain('400');
      expect(res.body.detail).toContain('Unsupported parameter');
      const record = await settledRecord(stack, res.headers.get('x-agentry-execution-id')!);
      expect(record).toMatchObject({ status: 'failed', error_status: 502 });
    }
    // A 400 is not retryable (LLM-3): one model request per execution.
    expect(fake.requestsFor('fail400')).toHaveLength(3);
  });

  it('EX-7: a failure after the first byte (every attempt drops mid-stream) → 200 and one in-band error 502', async () => {
    fake.script('drop', {
      text: 'one two three four five six',
      dropAfterDeltas: { attempts: 100, after: 2 },
    });
    const res = await execute(BODY, 'drop');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const events = parseNdjson(res.text);
    const terminals = events.filter((e) => e.type === 'done' || e.type === 'error');
    expect(terminals).toHaveLength(1);
    expect(events[events.length - 1]).toMatchObject({ type: 'error', status: 502 });
    expect(events[events.length - 1].detail).toMatch(/^Model server failed/);
    expect(events.filter((e) => e.type === 'delta').length).toBeGreaterThanOrEqual(2);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // Four attempts (AGENTRY_LLM_MAX_ATTEMPTS), a reset before each later attempt's text.
    expect(fake.requestsFor('drop')).toHaveLength(4);
    expect(events.filter((e) => e.type === 'reset').map((e) => e.attempt)).toEqual([2, 3, 4]);
  });
});

describe('§10: the dry run returns exactly the fragments an execution traces', () => {
  const words = fc
    .array(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 4 })
    .map((w) => w.join(' '));
  const classification = fc.constantFrom<unknown>(
    'public',
    'internal',
    'hr',
    ['public'],
    ['internal', 'hr'],
    ['public', 'hr'],
    { name: 'internal', exact: true },
    [{ name: 'internal', exact: true }, 'hr'],
    [],
  );
  const filter = fc.option(
    fc.constantFrom<unknown>(
      { team: 'ops' },
      { team: { $in: ['dev', 'hr'] } },
      { year: { $gte: 2022 } },
      { $or: [{ team: 'dev' }, { year: { $lt: 2022 } }] },
      { team: { $exists: false } },
      { team: { $ne: 'ops' } },
    ),
    { nil: undefined },
  );

  it('§10: for random questions, classification forms and filters, dry-run fragments = traced fragments (ids, order, scores, text)', async () => {
    fake.script('m', { text: 'ok' });
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(
        words,
        words,
        classification,
        filter,
        filter,
        async (question, topic, cls, contextFilter, relatedFilter) => {
          const filters: Record<string, unknown> = {};
          if (contextFilter !== undefined) filters.context = contextFilter;
          if (relatedFilter !== undefined) filters.related = relatedFilter;
          const body = {
            prompt: { question, topic },
            classification: cls,
            ...(Object.keys(filters).length > 0 ? { filters } : {}),
            stream: false,
            tracing: true,
          };
          const dry = await dryRun(body);
          expect(dry.status).toBe(200);
          expect(Object.keys(dry.body).sort()).toEqual(['context', 'related']);
          const run = await execute(body);
          expect(run.status).toBe(200);
          const trace = await stack.api.get(`/tracing/${run.headers.get('x-foundation4ai-tracing-id')}`);
          expect(trace.status).toBe(200);
          for (const name of ['context', 'related']) {
            const project = (fragments: any[]) =>
              fragments.map((f) => ({
                id: f.id,
                order_id: f.order_id,
                score: f.score,
                page_content: f.page_content,
              }));
            expect(project(trace.body.traces[name])).toEqual(project(dry.body[name]));
            expect(trace.body.traces[name]).toEqual(dry.body[name]);
          }
          // What the model read is the dry run's text in rank order.
          const sent = trace.body.prompt[1].template as string;
          expect(sent).toContain(
            `Notes:\n${dry.body.context.map((f: any) => f.page_content).join('\n')}\n\n`,
          );
          if (dry.body.context.length > 0) nonEmpty += 1;
        },
      ),
      { numRuns: 15, seed: 4242 },
    );
    // The property was not checked only on empty results.
    expect(nonEmpty).toBeGreaterThan(3);
  });
});

describe('AG-11/§9.3: deleted agents and recorded agent versions', () => {
  it('§9.3: the execution record names the agent version it ran; after a PATCH a new execution records the new version', async () => {
    fake.script('m', { text: 'ok' });
    const created = await stack.api.post('/agents', { ...AGENT, name: 'versioned' });
    expect(created.body.version).toBe(1);
    const id = created.body.id as string;
    const first = await execute({ ...BODY, stream: false }, 'm', id);
    expect(first.status).toBe(200);
    const firstRecord = await settledRecord(stack, first.headers.get('x-agentry-execution-id')!);
    expect(firstRecord).toMatchObject({ kind: 'agent', agent_id: id, agent_version: 1, status: 'succeeded' });

    const patched = await stack.api.patch(`/agents/${id}`, { description: 'second version' });
    expect(patched.status).toBe(200);
    expect(patched.body.version).toBe(2);
    const second = await execute({ ...BODY, stream: false }, 'm', id);
    expect(second.status).toBe(200);
    const secondRecord = await settledRecord(stack, second.headers.get('x-agentry-execution-id')!);
    expect(secondRecord).toMatchObject({ agent_id: id, agent_version: 2, status: 'succeeded' });
    expect((await stack.rt.executions.get(firstRecord!.id))!.agent_version).toBe(1);
  });

  it('§8.3: a deleted agent → execute, dry run, get and prompt → 404, and no model call', async () => {
    const created = await stack.api.post('/agents', { ...AGENT, name: 'short-lived' });
    const id = created.body.id as string;
    expect((await dryRun(BODY, id)).status).toBe(200);
    expect((await stack.api.delete(`/agents/${id}`)).status).toBe(204);
    const responses = {
      execute: await execute(BODY, 'm', id),
      dryRun: await dryRun(BODY, id),
      get: await stack.api.get(`/agents/${id}`),
      prompt: await stack.api.get(`/agents/${id}/prompt`),
    };
    for (const [what, res] of Object.entries(responses)) {
      expect({ what, status: res.status }).toEqual({ what, status: 404 });
      expect(res.body.detail).toContain(id);
    }
    expect(responses.execute.headers.get('x-agentry-execution-id')).toBeNull();
    expect(fake.requests).toHaveLength(0);
  });
});

describe('DX-5: search attributes of an agent execution', () => {
  it('DX-5: describe() shows AgentId, PipelineId, LlmId and ApiKeyId (ids only)', async () => {
    fake.script('m', { text: 'ok' });
    const res = await execute({ ...BODY, stream: false });
    expect(res.status).toBe(200);
    const executionId = res.headers.get('x-agentry-execution-id')!;
    const description = await stack.temporal.workflow.getHandle(`execution-${executionId}`).describe();
    const attributes = Object.fromEntries(
      description.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
    );
    expect(attributes).toMatchObject({
      AgentId: agentId,
      PipelineId: pipelineId,
      LlmId: llms.m,
      ApiKeyId: stack.env.adminKeyId,
    });
    expect(attributes.ChainId).toBeUndefined();
    expect(description.workflowId).toBe(`execution-${executionId}`);
  });
});

describe('TR-2: trace retention (AGENTRY_TRACE_TTL=3)', () => {
  let short: Stack;
  let shortPipeline: string;
  let shortLlm: string;
  let shortAgent: string;

  beforeAll(async () => {
    short = await startStack({ env: { AGENTRY_TRACE_TTL: '3' } });
    shortPipeline = await setUpPipeline(short);
    shortLlm = await registerLlm(short, 'm');
    shortAgent = (await short.api.post('/agents', AGENT)).body.id as string;
    await documentsReady(short.api, shortPipeline, [await ingest(short, shortPipeline, DOCUMENTS[2]!)]);
    // A first execution warms the new worker up, so the traced one below is read well within its TTL.
    const warm = await short.api.post(
      `/agents/${shortAgent}/execute`,
      { ...BODY, stream: false },
      { 'x-pipeline-id': shortPipeline, 'x-llm-id': shortLlm },
    );
    expect(warm.status).toBe(200);
  });

  afterAll(async () => {
    await short?.stop();
  });

  it('TR-2: a trace is readable at once, and 404 once its TTL passed although it is read all along (reads do not extend it)', async () => {
    fake.script('m', { text: 'ok' });
    const res = await short.api.post(
      `/agents/${shortAgent}/execute`,
      { ...BODY, stream: false, tracing: true },
      { 'x-pipeline-id': shortPipeline, 'x-llm-id': shortLlm },
    );
    expect(res.status).toBe(200);
    const traceId = res.headers.get('x-foundation4ai-tracing-id')!;
    const first = await short.api.get(`/tracing/${traceId}`);
    expect(first.status).toBe(200);
    expect(first.body.inputs).toEqual(BODY.prompt);
    expect(first.body.traces.context.length).toBeGreaterThan(0);
    // Read every 100 ms: a read that refreshed the TTL would keep the trace forever, and this
    // wait would time out. No assertion is on when it expires.
    const gone = await until(
      async () => {
        const read = await short.api.get(`/tracing/${traceId}`);
        return read.status === 200 ? undefined : read;
      },
      { what: 'the trace to expire', timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ detail: `Trace with id ${traceId} not found` });
  });
});
