// SPEC §9–§11 through the API with a real worker: the checks of §9.2 (EX-1), execution with
// retrieval in placeholder order (EX-2), single-pass render and the post-render check (EX-3,
// EX-4), traces (TR-1..TR-3) and the dry run (§10).
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { answerOf, parseNdjson } from '../helpers/http';
import { documentsReady, seedPipeline } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;
let fake: FakeModelServer;
let pipelineId: string;
let llmId: string;
let agentId: string;

const AGENT = {
  name: 'support-answers',
  prompt: [
    { role: 'system', template: 'Answer using only the reference text.' },
    { role: 'assistant', template: 'Never sent {question}', include: false },
    { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}' },
  ],
  placeholders: [
    { name: 'question', type: 'query' },
    { name: 'context', type: 'similarity', target: 'question', params: { k: 2 } },
  ],
};

async function ingest(
  content: string,
  classification: string,
  metadata: Record<string, unknown> = {},
): Promise<void> {
  const res = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
    content,
    classification,
    metadata,
  });
  expect(res.status).toBe(202);
  await documentsReady(stack.api, pipelineId, [res.body.id]);
}

const headers = () => ({ 'x-pipeline-id': pipelineId, 'x-llm-id': llmId });
const execute = (body: unknown, extra: Record<string, string> = {}) =>
  stack.api.post(`/agents/${agentId}/execute`, body, { ...headers(), ...extra });

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  const model = await stack.api.post('/embedding_models', { name: 'hash', provider: 'hash', size: 128 });
  const splitter = await stack.api.post('/text_splitters', {
    name: 'lines',
    provider: 'character',
    parameters: { separator: '\n', chunk_size: 60, chunk_overlap: 0 },
  });
  const pipeline = await stack.api.post('/pipelines', {
    name: 'kb',
    embedding_model_id: model.body.id,
    text_splitter_id: splitter.body.id,
    classifications: [{ name: 'internal', includes: ['public'] }, { name: 'public' }],
  });
  pipelineId = pipeline.body.id;
  const llm = await stack.api.post('/llms', {
    name: 'fake',
    endpoint: fake.url,
    model: 'm',
    api_key: 'sk-x',
  });
  llmId = llm.body.id;
  agentId = (await stack.api.post('/agents', AGENT)).body.id;
  await ingest(
    'Rotate database credentials with the vault rotate command.\nThe cafeteria opens at eight.',
    'internal',
  );
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

describe('§9.2 checks before any workflow', () => {
  it('EX-1: missing query values → 400 listing every missing name, in the documented shape', async () => {
    const res = await execute({ prompt: {}, classification: 'internal' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      detail: 'Missing values for query placeholders: question',
      errors: [
        {
          type: 'missing_query_value',
          path: 'prompt.question',
          placeholder: 'question',
          message: 'value required',
        },
      ],
    });
    expect(res.headers.get('x-agentry-execution-id')).toBeNull();
  });

  it('§9.2 step 5: a misspelled value name is named as not a placeholder, with the closest placeholder', async () => {
    const misspelled = await execute({ prompt: { questoin: 'q' }, classification: 'internal' });
    expect(misspelled.status).toBe(400);
    expect(misspelled.body).toEqual({
      detail:
        'Not query placeholders of the agent: prompt.questoin (closest placeholder: prompt.question); ' +
        'missing values for query placeholders: question',
      errors: [
        {
          type: 'unknown_query_value',
          path: 'prompt.questoin',
          closest_placeholder: 'question',
          message: 'not a query placeholder of the agent; the closest one is prompt.question',
        },
        {
          type: 'missing_query_value',
          path: 'prompt.question',
          placeholder: 'question',
          message: 'value required',
        },
      ],
    });
    // With every value there, the extra key alone.
    const extra = await execute({ prompt: { question: 'q', Question: 'q' }, classification: 'internal' });
    expect(extra.status).toBe(400);
    expect(extra.body.detail).toBe(
      'Not query placeholders of the agent: prompt.Question (closest placeholder: prompt.question)',
    );
    expect(extra.headers.get('x-agentry-execution-id')).toBeNull();
    expect(fake.requests).toHaveLength(0);
  });

  it('§9.2: headers, permissions, values, filters and classifications are checked with their statuses', async () => {
    const body = { prompt: { question: 'q' }, classification: 'internal' };
    expect((await stack.api.post(`/agents/${agentId}/execute`, body, { 'x-llm-id': llmId })).status).toBe(
      400,
    );
    expect((await execute(body, { 'x-pipeline-id': 'nope' })).status).toBe(400);
    expect((await execute(body, { 'x-pipeline-id': '01890a5d-ac96-774b-bcce-b302099a8057' })).status).toBe(
      404,
    );
    expect((await execute(body, { 'x-llm-id': '01890a5d-ac96-774b-bcce-b302099a8057' })).status).toBe(404);
    expect(
      (await stack.api.post(`/agents/01890a5d-ac96-774b-bcce-b302099a8057/execute`, body, headers())).status,
    ).toBe(404);
    const bad = [
      { prompt: { question: 1 }, classification: 'internal' },
      { prompt: { question: 'q', other: 'x' }, classification: 'internal' },
      { ...body, filters: { question: { a: 1 } } },
      { ...body, filters: { context: { a: { $near: 1 } } } },
      { ...body, classification: 'secret' },
      { ...body, stream: 'xml' },
      { ...body, temperature: 3 },
    ];
    for (const b of bad) {
      const res = await execute(b);
      expect({ b, status: res.status }).toEqual({ b, status: 400 });
    }
    const key = await stack.api.post('/api_keys', {
      name: 'agent-only',
      permissions: ['execute:agents', 'execute:llms'],
    });
    const limited = stack.api.as({ id: key.body.id, secret: key.body.secret });
    const forbidden = await limited.post(`/agents/${agentId}/execute`, body, headers());
    expect(forbidden.status).toBe(403);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('§9.3 execution', () => {
  it('EX-2/EX-3: retrieved fragments and the value are inserted; include:false messages are not sent', async () => {
    fake.script('m', { text: 'Use vault rotate.' });
    const res = await execute({
      prompt: { question: 'How do I rotate the database credentials?' },
      classification: 'internal',
    });
    expect(res.status).toBe(200);
    expect(answerOf(parseNdjson(res.text))).toBe('Use vault rotate.');
    const sent = fake.requests[0]!.body as any;
    expect(sent.instructions).toBe('Answer using only the reference text.');
    expect(sent.input).toHaveLength(1);
    expect(sent.input[0].content).toContain('Rotate database credentials with the vault rotate command.');
    expect(sent.input[0].content).toContain('Question: How do I rotate the database credentials?');
    expect(JSON.stringify(sent)).not.toContain('Never sent');
  });

  it('EX-3: a value containing placeholder-like text is inserted verbatim and never expanded... then EX-4 refuses it (400, no model call)', async () => {
    const res = await execute({
      prompt: { question: 'What is {context}?' },
      classification: 'internal',
      tracing: true,
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe('Rendered prompt contains placeholder-like text: {context}');
    expect(res.headers.get('x-foundation4ai-tracing-id')).toBeNull();
    expect(fake.requests).toHaveLength(0);
  });

  it('TR-1..TR-3: stream false + tracing: plain text, trace header; the trace holds inputs, fragments and the prompt as sent; other keys get 404', async () => {
    fake.script('m', { text: 'Eight o clock.' });
    const res = await execute({
      prompt: { question: 'When does the cafeteria open?' },
      classification: 'internal',
      stream: false,
      tracing: true,
      temperature: 0.2,
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('Eight o clock.');
    const traceId = res.headers.get('x-foundation4ai-tracing-id')!;
    expect(traceId).toMatch(/^[0-9a-f-]{36}$/);
    const trace = await stack.api.get(`/tracing/${traceId}`);
    expect(trace.status).toBe(200);
    expect(trace.body.inputs).toEqual({ question: 'When does the cafeteria open?' });
    expect(trace.body.traces.context[0]).toMatchObject({
      page_content: 'The cafeteria opens at eight.',
      classification: 'internal',
      order_id: 0,
    });
    expect(typeof trace.body.traces.context[0].score).toBe('number');
    expect(trace.body.prompt).toEqual([
      { role: 'system', template: 'Answer using only the reference text.' },
      { role: 'user', template: expect.stringContaining('Question: When does the cafeteria open?') },
    ]);
    expect(JSON.stringify(trace.body)).not.toContain('Eight o clock');
    const other = await stack.api.post('/api_keys', { name: 'other-reader', permissions: [] });
    const foreign = await stack.api
      .as({ id: other.body.id, secret: other.body.secret })
      .get(`/tracing/${traceId}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ detail: `Trace with id ${traceId} not found` });
    expect((await stack.api.get('/tracing/not-a-uuid')).body).toEqual({
      detail: 'Trace with id not-a-uuid not found',
    });
    expect(fake.requests[0]!.body).toMatchObject({ temperature: 0.2 });
  });

  it('EX-5, §9.4: the trace is stored before the model call: readable after the model refused the request, whose 502 names it', async () => {
    // A 400 is not retried (LLM-3): the one model call fails and the execution ends with it.
    fake.script('m', { failFirst: { count: 1, status: 400, message: 'bad request' } });
    const res = await execute({
      prompt: { question: 'When does the cafeteria open?' },
      classification: 'internal',
      tracing: true,
    });
    // EX-7: the failure came before the first byte, so it is the response's status.
    expect(res.status).toBe(502);
    expect(fake.requestsFor('m')).toHaveLength(1);
    // §9.4: the trace was stored, so the error response names it, as the execution record does.
    const record = await stack.api.get(`/executions/${res.headers.get('x-agentry-execution-id')}`);
    expect(record.status).toBe(200);
    const traceId = record.body.trace_id;
    expect(traceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-foundation4ai-tracing-id')).toBe(traceId);
    const trace = await stack.api.get(`/tracing/${traceId}`);
    expect(trace.status).toBe(200);
    expect(trace.body.inputs).toEqual({ question: 'When does the cafeteria open?' });
    expect(trace.body.prompt).toEqual([
      { role: 'system', template: 'Answer using only the reference text.' },
      { role: 'user', template: expect.stringContaining('Question: When does the cafeteria open?') },
    ]);
  });

  it('§10: the dry run returns every retrieval placeholder with the fragments an execution traces', async () => {
    fake.script('m', { text: 'ok' });
    const body = {
      prompt: { question: 'vault rotate credentials' },
      classification: 'internal',
      stream: false,
      tracing: true,
    };
    const dry = await stack.api.post(`/agents/${agentId}/search`, body, { 'x-pipeline-id': pipelineId });
    expect(dry.status).toBe(200);
    expect(Object.keys(dry.body)).toEqual(['context']);
    const run = await execute(body);
    const trace = await stack.api.get(`/tracing/${run.headers.get('x-foundation4ai-tracing-id')}`);
    expect(trace.body.traces.context).toEqual(dry.body.context);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('EX-2 query embeddings', () => {
  it('EX-2: identical search texts of one execution are embedded once (and so in the dry run); different texts each once', async () => {
    fake.scriptEmbeddings('emb-once', { size: 16 });
    const pipeline = await seedPipeline(stack.api, {
      name: 'once',
      embeddingModel: {
        name: 'embedded-once',
        provider: 'openai',
        size: 16,
        parameters: { endpoint: fake.url, model: 'emb-once', api_key: 'sk-emb' },
      },
      documents: ['The vault rotates credentials.\nThe cafeteria opens at eight.'],
    });
    const agent = await stack.api.post('/agents', {
      name: 'three-contexts',
      prompt: [
        { role: 'system', template: 'Answer from the context.' },
        { role: 'user', template: '{a}\n{b}\n{c}\nQ: {question} ({topic})' },
      ],
      placeholders: [
        { name: 'question', type: 'query' },
        { name: 'topic', type: 'query' },
        { name: 'a', type: 'similarity', target: 'question', params: { k: 1 } },
        { name: 'b', type: 'mmr', target: 'question', params: { k: 1, fetch_k: 2, lambda_mult: 0.5 } },
        { name: 'c', type: 'similarity', target: 'topic', params: { k: 1 } },
      ],
    });
    expect(agent.status).toBe(201);
    const body = { prompt: { question: 'When does it open?', topic: 'cafeteria' }, classification: 'public' };
    const embedded = () => fake.embeddingRequestsFor('emb-once').flatMap((r) => r.body.input as string[]);
    const before = embedded().length;
    fake.script('m', { text: 'At eight.' });
    const res = await stack.api.post(`/agents/${agent.body.id}/execute`, body, {
      'x-pipeline-id': pipeline.pipelineId,
      'x-llm-id': llmId,
    });
    expect(res.status).toBe(200);
    expect(embedded().slice(before).sort()).toEqual(['When does it open?', 'cafeteria']);

    const dryBefore = embedded().length;
    const dry = await stack.api.post(`/agents/${agent.body.id}/search`, body, {
      'x-pipeline-id': pipeline.pipelineId,
    });
    expect(dry.status).toBe(200);
    expect(embedded().slice(dryBefore).sort()).toEqual(['When does it open?', 'cafeteria']);
  });
});
