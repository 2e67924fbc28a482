// LLM-1..4 and the event protocol of SPEC §9.5 through the real API, Temporal dev server, worker,
// Redis relay and PostgreSQL, against the scripted fake model server.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { answerOf, parseNdjson, parseSse } from '../helpers/http';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait';

let stack: Stack;
let fake: FakeModelServer;
let llmId: string;

const question = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Say hello to the world' },
  ],
};

async function registerLlm(model: string): Promise<string> {
  const res = await stack.api.post('/llms', {
    name: `llm-${model}`,
    endpoint: fake.url,
    model,
    api_key: `sk-${model}-secret`,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  llmId = await registerLlm('default');
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

/** The execution record once its workflow closed. */
async function settledRecord(executionId: string | null) {
  await stack.temporal.workflow
    .getHandle(`execution-${executionId}`)
    .result()
    .catch(() => undefined);
  return stack.rt.executions.get(executionId!);
}

describe('LLM-4 direct query', () => {
  it('LLM-4: streams NDJSON by default: deltas with seq and attempt, then exactly one done with usage', async () => {
    fake.script('default', { text: 'Hello brave new world' });
    const res = await stack.api.post(`/llms/${llmId}/query`, question);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    expect(res.headers.get('x-agentry-execution-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const events = parseNdjson(res.text);
    expect(answerOf(events)).toBe('Hello brave new world');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
    expect(events[events.length - 1]).toMatchObject({
      type: 'done',
      attempt: 1,
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
    expect(events.every((e) => e.type !== 'start')).toBe(true);
  });

  it('LLM-4: stream "sse" answers server-sent events with id, event and data', async () => {
    fake.script('default', { text: 'one two three' });
    const res = await stack.api.post(`/llms/${llmId}/query`, { ...question, stream: 'sse' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const messages = parseSse(res.text).filter((m) => m.data);
    const events = messages.map((m) => JSON.parse(m.data!));
    expect(answerOf(events)).toBe('one two three');
    for (const m of messages) {
      const event = JSON.parse(m.data!);
      expect(m.id).toBe(String(event.seq));
      expect(m.event).toBe(event.type);
    }
    expect(events[events.length - 1].type).toBe('done');
  });

  it('LLM-4: stream false answers the complete text as text/plain', async () => {
    fake.script('default', { text: 'The whole answer.' });
    const res = await stack.api.post(`/llms/${llmId}/query`, { ...question, stream: false });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('The whole answer.');
    expect(res.headers.get('x-agentry-execution-id')).toBeTruthy();
  });

  it('LLM-2: system messages become instructions, the rest input items; temperature only when given; always streamed', async () => {
    await stack.api.post(`/llms/${llmId}/query`, {
      messages: [
        { role: 'system', content: 'First rule.' },
        { role: 'user', content: 'Hi' },
        { role: 'system', content: 'Second rule.' },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'Again' },
      ],
      stream: false,
    });
    await stack.api.post(`/llms/${llmId}/query`, { ...question, temperature: 0.3, stream: false });
    const [first, second] = fake.requestsFor('default');
    expect(first!.body).toMatchObject({
      model: 'default',
      instructions: 'First rule.\n\nSecond rule.',
      input: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'Again' },
      ],
      stream: true,
    });
    expect(first!.body).not.toHaveProperty('temperature');
    expect(second!.body).toMatchObject({ temperature: 0.3 });
    expect(first!.headers.authorization).toBe('Bearer sk-default-secret');
  });
});

describe('LLM-3 retries and failures', () => {
  it('LLM-3: a model 429 then success is retried by Temporal and the client sees one clean answer', async () => {
    const id = await registerLlm('rate-limited');
    fake.script('rate-limited', {
      text: 'after the wait',
      failFirst: { count: 2, status: 429, retryAfterSeconds: 0 },
    });
    const res = await stack.api.post(`/llms/${id}/query`, question);
    expect(res.status).toBe(200);
    const events = parseNdjson(res.text);
    expect(answerOf(events)).toBe('after the wait');
    expect(events.some((e) => e.type === 'reset')).toBe(false);
    expect(events[events.length - 1]).toMatchObject({ type: 'done', attempt: 3 });
    expect(fake.requestsFor('rate-limited')).toHaveLength(3);
    expect(await settledRecord(res.headers.get('x-agentry-execution-id'))).toMatchObject({
      status: 'succeeded',
      attempts: 3,
    });
  });

  it('LLM-3/EX-7: a model 400 is not retried and answers 502 before the first byte, naming the upstream status', async () => {
    const id = await registerLlm('rejecting');
    fake.script('rejecting', {
      failFirst: { count: 10, status: 400, message: 'Unsupported parameter: foo' },
    });
    const res = await stack.api.post(`/llms/${id}/query`, question);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.body.detail).toContain('400');
    expect(res.body.detail).toContain('Unsupported parameter: foo');
    expect(fake.requestsFor('rejecting')).toHaveLength(1);
    expect(await settledRecord(res.headers.get('x-agentry-execution-id'))).toMatchObject({
      status: 'failed',
      error_status: 502,
      error_type: 'Llm.Rejected',
    });
    // DX-6: failure messages travel encoded too; the upstream's words are not in the history.
    const history = await stack.temporal.workflow
      .getHandle(`execution-${res.headers.get('x-agentry-execution-id')}`)
      .fetchHistory();
    expect(JSON.stringify(history)).not.toContain('Unsupported parameter');
  });

  it('LLM-3: a model that keeps answering 429 ends in 502 after the configured attempts', async () => {
    const id = await registerLlm('always-busy');
    fake.script('always-busy', { failFirst: { count: 100, status: 429, message: 'Slow down' } });
    const res = await stack.api.post(`/llms/${id}/query`, { ...question, stream: false });
    expect(res.status).toBe(502);
    expect(res.body.detail).toContain('429');
    expect(fake.requestsFor('always-busy')).toHaveLength(4);
  });

  it('§9.5: a connection dropped after 3 deltas makes the client receive reset, then the full answer', async () => {
    const id = await registerLlm('dropping');
    fake.script('dropping', {
      text: 'alpha beta gamma delta epsilon',
      dropAfterDeltas: { attempts: 1, after: 3 },
    });
    const res = await stack.api.post(`/llms/${id}/query`, question);
    expect(res.status).toBe(200);
    const events = parseNdjson(res.text);
    const resetAt = events.findIndex((e) => e.type === 'reset');
    // The three deltas sent before the drop (deltas that reach the worker together go out as one).
    expect(answerOf(events.slice(0, resetAt))).toBe('alpha beta gamma');
    expect(events[resetAt]).toMatchObject({ type: 'reset', attempt: 2 });
    expect(answerOf(events)).toBe('alpha beta gamma delta epsilon');
    expect(events[events.length - 1]).toMatchObject({ type: 'done', attempt: 2 });
  });

  it('LLM-3, issue 33: a stream that ends with response.incomplete (the model stopped at its output limit) is not retried: one model call, the text it gave, then done naming the reason; the answer is stored', async () => {
    const id = await registerLlm('cut-short');
    fake.script('cut-short', { text: 'one two three', incomplete: 'max_output_tokens' });
    const res = await stack.api.post(`/llms/${id}/query`, question);
    expect(res.status).toBe(200);
    const events = parseNdjson(res.text);
    expect(answerOf(events)).toBe('one two three');
    expect(events.filter((e) => e.type === 'reset')).toHaveLength(0);
    expect(events[events.length - 1]).toMatchObject({
      type: 'done',
      attempt: 1,
      incomplete_details: { reason: 'max_output_tokens' },
    });
    expect(fake.requestsFor('cut-short')).toHaveLength(1);
    expect(await settledRecord(res.headers.get('x-agentry-execution-id'))).toMatchObject({
      status: 'succeeded',
    });
  });

  it('§9.5: after the model started, a failure of every attempt ends the stream in-band with one error event (502)', async () => {
    const id = await registerLlm('always-drops');
    fake.script('always-drops', { text: 'a b c d e f', dropAfterDeltas: { attempts: 100, after: 2 } });
    const res = await stack.api.post(`/llms/${id}/query`, question);
    expect(res.status).toBe(200);
    const events = parseNdjson(res.text);
    const last = events[events.length - 1];
    expect(last).toMatchObject({ type: 'error', status: 502 });
    expect(events.filter((e) => e.type === 'error' || e.type === 'done')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'reset')).toHaveLength(3);
  });

  it('§9.6: a client that disconnects does not stop the execution; the answer is stored', async () => {
    const id = await registerLlm('slow');
    fake.script('slow', { text: 'w1 w2 w3 w4 w5 w6 w7 w8', deltaDelayMs: 150 });
    const controller = new AbortController();
    const res = await fetch(`${stack.url}/llms/${id}/query`, {
      method: 'POST',
      headers: stack.api.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(question),
      signal: controller.signal,
    });
    const executionId = res.headers.get('x-agentry-execution-id')!;
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const handle = stack.temporal.workflow.getHandle(`execution-${executionId}`);
    const result = await handle.result();
    const answer = await stack.rt.executions.getPayload<{ text: string }>(result.answerPayloadId);
    expect(answer?.text).toBe('w1 w2 w3 w4 w5 w6 w7 w8');
    expect(fake.requestsFor('slow')[0]!.aborted).toBe(false);
  });

  it('LLM-3: a stream with no delta for the no-progress time fails the attempt as Llm.Stalled and is retried', async () => {
    const id = await registerLlm('stalling');
    fake.script('stalling', { hang: true });
    const pending = stack.api.post(`/llms/${id}/query`, question);
    await waitFor(() => fake.requestsFor('stalling').length === 1);
    fake.script('stalling', { text: 'finally here' });
    const res = await pending;
    expect(res.status).toBe(200);
    const events = parseNdjson(res.text);
    expect(answerOf(events)).toBe('finally here');
    expect(events[events.length - 1]).toMatchObject({ type: 'done', attempt: 2 });
    expect(fake.requestsFor('stalling')[0]!.aborted).toBe(true);
    expect(await settledRecord(res.headers.get('x-agentry-execution-id'))).toMatchObject({
      status: 'succeeded',
      attempts: 2,
    });
  });

  it('LLM-3/§9.5: cancelling the workflow aborts the model request and ends the stream with error 499', async () => {
    const id = await registerLlm('endless');
    fake.script('endless', { text: 'never ending story '.repeat(200), deltaDelayMs: 200 });
    const res = await fetch(`${stack.url}/llms/${id}/query`, {
      method: 'POST',
      headers: stack.api.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(question),
    });
    expect(res.status).toBe(200);
    const executionId = res.headers.get('x-agentry-execution-id')!;
    const body = res.text();
    await waitFor(() => fake.requestsFor('endless').length === 1);
    await stack.temporal.workflow.getHandle(`execution-${executionId}`).cancel();
    // Well before the 40 s the stream would run: the cancel aborted it (DX-3 measures how soon).
    await waitFor(() => fake.requestsFor('endless')[0]!.aborted, { what: 'the model request to be aborted' });
    const events = parseNdjson(await body);
    expect(events[events.length - 1]).toMatchObject({ type: 'error', status: 499 });
    expect(events.filter((e) => e.type === 'error' || e.type === 'done')).toHaveLength(1);
    expect(await settledRecord(executionId)).toMatchObject({ status: 'cancelled', error_status: 499 });
  });

  it('§9.6: a workflow that closes without a terminal event (terminated) still ends the stream with one error', async () => {
    const id = await registerLlm('terminated');
    fake.script('terminated', { text: 'tick '.repeat(100), deltaDelayMs: 100 });
    const res = await fetch(`${stack.url}/llms/${id}/query`, {
      method: 'POST',
      headers: stack.api.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(question),
    });
    expect(res.status).toBe(200);
    const body = res.text();
    await waitFor(() => fake.requestsFor('terminated').length === 1);
    await stack.temporal.workflow
      .getHandle(`execution-${res.headers.get('x-agentry-execution-id')}`)
      .terminate('test');
    const events = parseNdjson(await body);
    expect(events[events.length - 1]).toMatchObject({ type: 'error' });
    expect(events.filter((e) => e.type === 'error' || e.type === 'done')).toHaveLength(1);
  });
});
