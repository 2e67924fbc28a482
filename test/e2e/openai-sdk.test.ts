// Issue 28: the openai npm package, unchanged, is an Agentry client through the Responses API's
// own protocol. Separate API and worker processes on the real services (PostgreSQL, the Redis
// relay, Temporal) and the fake model server; the SDK points at `<api>/v1` with an API key as
// `<key id>.<secret>`. Every case goes through the SDK's own methods and exceptions.
import { Client, Connection } from '@temporalio/client';
import OpenAI, { type APIError } from 'openai';
import { Client as PgClient } from 'pg';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { scriptedAnswer, seedAgent, type SeededAgent } from '../helpers/agent-streams';
import type { Api } from '../helpers/http';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { TEMPORAL_ADDRESS } from '../helpers/services';
import { until, waitFor } from '../helpers/wait';

const MODEL = 'sdk';
const QUESTION = 'How do I rotate the credentials?';

let stack: ProcessStack;
let fake: FakeModelServer;
let temporal: Client;
let seeded: SeededAgent;
let owner: Api;
let client: OpenAI;
let keyId: string;
let secret: string;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  seeded = await seedAgent(stack.admin, fake, { model: MODEL });
  const key = await stack.admin.post('/api_keys', {
    name: 'sdk-app',
    permissions: ['execute:agents', 'execute:pipelines', 'execute:llms'],
  });
  expect(key.status).toBe(201);
  [keyId, secret] = [key.body.id, key.body.secret];
  owner = stack.admin.as({ id: keyId, secret });
  client = new OpenAI({ baseURL: `${stack.admin.baseUrl}/v1`, apiKey: `${keyId}.${secret}` });
  temporal = new Client({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
});

afterAll(async () => {
  await temporal?.connection.close();
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

/** The agent's request in this protocol: the LLM and the pipeline by name, as a client may. */
const request = (question = QUESTION) => ({
  prompt: { id: seeded.agentId, variables: { question } },
  model: `rel-${MODEL}`,
  metadata: { pipeline: `rel-${MODEL}`, classification: 'internal' },
});

async function executionCount(): Promise<number> {
  const pg = new PgClient({ connectionString: stack.database.url });
  await pg.connect();
  try {
    return Number((await pg.query('select count(*) as n from executions')).rows[0].n);
  } finally {
    await pg.end();
  }
}

describe('POST /v1/responses through the openai SDK', () => {
  it('streamed: the SDK stream helper accumulates the answer; the execution is the one GET /executions/{id}, its trace and Temporal (search attributes) show', async () => {
    const answer = scriptedAnswer(12);
    fake.script(MODEL, { text: answer, deltaDelayMs: 5 });
    const stream = client.responses.stream({
      ...request(),
      metadata: { ...request().metadata, tracing: 'true' },
    });
    let deltas = '';
    stream.on('response.output_text.delta', (event) => (deltas += event.delta));
    const response = await stream.finalResponse();
    expect(deltas).toBe(answer);
    expect(response.output_text).toBe(answer);
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: seeded.llmId,
      prompt: { id: seeded.agentId, version: '1' },
      metadata: { pipeline: seeded.pipelineId, trace_id: expect.any(String) },
    });
    expect(response.usage!.output_tokens).toBe(12);

    const execution = await until(
      async () => {
        const res = await owner.get(`/executions/${response.id}`);
        return res.body.status === 'succeeded' ? res.body : undefined;
      },
      { what: 'the execution to succeed' },
    );
    expect(execution).toMatchObject({
      id: response.id,
      kind: 'agent',
      agent_id: seeded.agentId,
      pipeline_id: seeded.pipelineId,
      llm_id: seeded.llmId,
      trace_id: response.metadata!.trace_id,
      answer,
      usage: { input_tokens: response.usage!.input_tokens, output_tokens: 12 },
    });
    const trace = await owner.get(`/tracing/${execution.trace_id}`);
    expect(trace.status).toBe(200);
    expect(trace.body.inputs).toEqual({ question: QUESTION });

    const handle = temporal.workflow.getHandle(`execution-${response.id}`);
    const attributes = Object.fromEntries(
      (await handle.describe()).typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
    );
    expect(attributes).toMatchObject({
      AgentId: seeded.agentId,
      PipelineId: seeded.pipelineId,
      LlmId: seeded.llmId,
      ApiKeyId: keyId,
    });
    // What the Temporal UI's filter by AgentId runs: a visibility query.
    await waitFor(
      async () => {
        for await (const wf of temporal.workflow.list({ query: `AgentId = "${seeded.agentId}"` }))
          if (wf.workflowId === `execution-${response.id}`) return true;
        return false;
      },
      { what: 'the workflow in a visibility query by AgentId' },
    );
  });

  it('not streamed: the completed response with output_text and usage; one model call', async () => {
    fake.script(MODEL, { text: 'Rotate them from the console.' });
    const { data: response, response: http } = await client.responses.create(request()).withResponse();
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Rotate them from the console.');
    expect(response.output).toEqual([
      expect.objectContaining({ type: 'message', role: 'assistant', status: 'completed' }),
    ]);
    expect(response.usage).toMatchObject({ output_tokens: 5, total_tokens: expect.any(Number) });
    expect(http.headers.get('x-agentry-execution-id')).toBe(response.id);
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
  });

  it('background: answers at once with the id (queued), then retrieve until done', async () => {
    const answer = scriptedAnswer(20);
    fake.script(MODEL, { text: answer, deltaDelayMs: 40 });
    const created = await client.responses.create({ ...request(), background: true });
    expect(created).toMatchObject({ status: 'queued', background: true, output: [] });
    const seen = new Set<string>([created.status!]);
    let response = created;
    while (response.status === 'queued' || response.status === 'in_progress') {
      await new Promise((resolve) => setTimeout(resolve, 100));
      response = await client.responses.retrieve(created.id);
      seen.add(response.status!);
    }
    expect(seen).toContain('in_progress');
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(answer);
    expect(response.completed_at).toBeGreaterThanOrEqual(response.created_at);
  });

  it('a stream whose connection is cut mid-answer resumes with starting_after: no event lost or repeated', async () => {
    const answer = scriptedAnswer(30);
    fake.script(MODEL, { text: answer, deltaDelayMs: 40 });
    const first: OpenAI.Responses.ResponseStreamEvent[] = [];
    const stream = await client.responses.create({ ...request(), stream: true });
    for await (const event of stream) {
      first.push(event);
      if (first.filter((e) => e.type === 'response.output_text.delta').length === 5) break; // cuts the connection
    }
    const id = (first[0] as OpenAI.Responses.ResponseCreatedEvent).response.id;
    const last = first.at(-1)!.sequence_number;
    const rest: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.retrieve(id, { stream: true, starting_after: last }))
      rest.push(event);
    const all = [...first, ...rest];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(rest[0]!.sequence_number).toBe(last + 1);
    const text = all.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect(text).toBe(answer);
    expect(all.at(-1)).toMatchObject({ type: 'response.completed', response: { output_text: answer } });
    // The SDK's helper resumes by id the same way (it replays and skips what the client had).
    const resumed = client.responses.stream({ response_id: id, starting_after: last });
    const emitted: number[] = [];
    resumed.on('event', (e) => emitted.push(e.sequence_number));
    expect((await resumed.finalResponse()).output_text).toBe(answer);
    expect(emitted).toEqual(rest.map((e) => e.sequence_number));
  });

  it('cancel: DX-3, the model request aborted within 2 s, the cancelled response; a second cancel answers it again', async () => {
    fake.script(MODEL, { text: scriptedAnswer(200), deltaDelayMs: 100 });
    const created = await client.responses.create({ ...request(), background: true });
    const call = await until(() => fake.requestsFor(MODEL)[0], { what: 'the model call' });
    const askedAt = Date.now();
    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled).toMatchObject({ id: created.id, status: 'cancelled', error: null });
    await waitFor(() => call.closedAt !== undefined, { what: 'the model request to close' });
    expect(call.aborted).toBe(true);
    expect(call.closedAt! - askedAt).toBeLessThan(2000);
    expect((await client.responses.cancel(created.id)).status).toBe('cancelled');
    expect((await client.responses.retrieve(created.id)).status).toBe('cancelled');
    expect((await owner.get(`/executions/${created.id}`)).body).toMatchObject({
      status: 'cancelled',
      error: { status: 499 },
    });
  });

  it('a wrong key: the SDK raises its AuthenticationError with the error in OpenAI shape', async () => {
    const wrong = new OpenAI({ baseURL: `${stack.admin.baseUrl}/v1`, apiKey: `${keyId}.not-the-secret` });
    const err = await wrong.responses.create(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as APIError).error).toEqual({
      message: 'Invalid API key',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    });
    expect(fake.requestsFor(MODEL)).toHaveLength(0);
  });

  it('EX-1: a missing variable is the SDK BadRequestError with the message of EX-1, naming prompt.variables.question; nothing starts', async () => {
    const before = await executionCount();
    const err = await client.responses
      .create({ ...request(), prompt: { id: seeded.agentId, variables: {} } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = err as APIError;
    expect(apiError.message).toBe('400 Missing values for query placeholders: question');
    expect(apiError.param).toBe('prompt.variables.question');
    expect(apiError.code).toBe('missing_query_value');
    expect(await executionCount()).toBe(before);
  });

  it('DX-4: the same request twice with one Idempotency-Key header: one model call, one execution', async () => {
    fake.script(MODEL, { text: 'Once.' });
    const before = await executionCount();
    const options = { headers: { 'Idempotency-Key': 'sdk-ticket-1' } };
    const first = await client.responses.create(request(), options);
    const { data: second, response } = await client.responses.create(request(), options).withResponse();
    expect(second.id).toBe(first.id);
    expect(second.output_text).toBe('Once.');
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
    expect(await executionCount()).toBe(before + 1);
  });
});
