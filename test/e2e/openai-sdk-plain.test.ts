// Issue 34 items 1-3: a /v1/responses create without `prompt` runs the registered LLM `model` names
// as a durable direct query, through the unchanged openai package against separate API and worker
// processes on the real services and the fake model server. What the model receives is read from
// the fake's recorded requests; what the client sees from the SDK's objects and exceptions.
import OpenAI, { type APIError } from 'openai';
import { Client as PgClient } from 'pg';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { scriptedAnswer, seedAgent, type SeededAgent } from '../helpers/agent-streams';
import type { Api } from '../helpers/http';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { until } from '../helpers/wait';

const MODEL = 'plain';
const LLM = `rel-${MODEL}`;

let stack: ProcessStack;
let fake: FakeModelServer;
let seeded: SeededAgent;
let client: OpenAI;
let other: OpenAI;
let owner: Api;

type Event = OpenAI.Responses.ResponseStreamEvent;

/** The Open Responses specification's required keys of a response object (ResponseResource). */
const REQUIRED = [
  'id', 'object', 'created_at', 'completed_at', 'status', 'incomplete_details', 'model',
  'previous_response_id', 'instructions', 'output', 'error', 'tools', 'tool_choice', 'truncation',
  'parallel_tool_calls', 'text', 'top_p', 'presence_penalty', 'frequency_penalty', 'top_logprobs',
  'temperature', 'reasoning', 'user', 'usage', 'max_output_tokens', 'max_tool_calls', 'store',
  'background', 'service_tier', 'metadata', 'safety_identifier', 'prompt_cache_key',
]; // prettier-ignore

async function sdkFor(name: string): Promise<OpenAI> {
  const key = await stack.admin.post('/api_keys', {
    name,
    permissions: ['execute:llms', 'execute:agents', 'execute:pipelines'],
  });
  expect(key.status).toBe(201);
  owner ??= stack.admin.as({ id: key.body.id, secret: key.body.secret });
  return new OpenAI({ baseURL: `${stack.admin.baseUrl}/v1`, apiKey: `${key.body.id}.${key.body.secret}` });
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  seeded = await seedAgent(stack.admin, fake, { model: MODEL });
  client = await sdkFor('plain-app');
  other = await sdkFor('another-app');
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

const modelInput = (i: number) => fake.requestsFor(MODEL)[i]!.body.input;
const asError = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as APIError,
  );

describe('OR-1: a create without prompt runs the LLM model names, as a durable direct query', () => {
  it('whole: the completed response with every key the specification requires, the execution a direct query', async () => {
    const { data: response, response: http } = await client.responses
      .create({ model: LLM, input: 'Hello there' })
      .withResponse();
    expect(response.output_text).toBe('Echo: Hello there');
    for (const key of REQUIRED) expect(response).toHaveProperty(key);
    expect(response).toMatchObject({
      status: 'completed', model: seeded.llmId, prompt: null, previous_response_id: null, instructions: null,
      tools: [], tool_choice: 'auto', parallel_tool_calls: true, temperature: 1, top_p: 1, presence_penalty: 0,
      frequency_penalty: 0, top_logprobs: 0, truncation: 'disabled', service_tier: 'default', store: true,
      background: false, reasoning: { effort: null, summary: null }, text: { format: { type: 'text' } },
      metadata: {}, user: null, safety_identifier: null, prompt_cache_key: null, max_output_tokens: null,
    }); // prettier-ignore
    expect(response.usage).toMatchObject({ input_tokens: 2, output_tokens: 3, total_tokens: 5 });
    expect(http.headers.get('x-agentry-execution-id')).toBe(response.id);
    expect(modelInput(0)).toEqual([{ role: 'user', content: 'Hello there' }]);
    const execution = await until(async () => {
      const res = await owner.get(`/executions/${response.id}`);
      return res.body.status === 'succeeded' ? res.body : undefined;
    });
    expect(execution).toMatchObject({
      kind: 'llm_query',
      llm_id: seeded.llmId,
      answer: 'Echo: Hello there',
      attempts: 1,
    });
    expect(await client.responses.retrieve(response.id)).toMatchObject({
      status: 'completed',
      output_text: 'Echo: Hello there',
    });
  });

  it('streamed: the SDK helper accumulates the deltas; every lifecycle event carries a complete response object', async () => {
    const answer = scriptedAnswer(8);
    fake.script(MODEL, { text: answer, deltaDelayMs: 5 });
    const stream = client.responses.stream({
      model: seeded.llmId,
      input: [{ role: 'user', content: 'Count' }],
    });
    const events: Event[] = [];
    stream.on('event', (e) => events.push(e));
    const response = await stream.finalResponse();
    expect(response.output_text).toBe(answer);
    const lifecycle = events.filter((e) => 'response' in e) as { response: object }[];
    expect(lifecycle.map((e) => (e as Event).type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.completed',
    ]);
    for (const { response: object } of lifecycle)
      for (const key of REQUIRED) expect(object).toHaveProperty(key);
    expect(lifecycle[0]!.response).toMatchObject({ usage: null, status: 'in_progress' });
  });

  it('items: system and developer messages, assistant history with phase and input_text parts reach the model in order; parameters are echoed', async () => {
    const response = await client.responses.create({
      model: LLM,
      instructions: 'Be terse.',
      // An output message fed back as openai-node types it (id, status), another as the spec's item param.
      input: [
        { role: 'system', content: 'You are a pirate.' },
        { role: 'developer', content: 'Answer in English.' },
        { type: 'message', role: 'assistant', content: 'Ahoy.', phase: 'commentary' },
        {
          type: 'message',
          id: 'msg_client_1',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Aye.', annotations: [] }],
          phase: 'final_answer',
        },
        { role: 'user', content: [{ type: 'input_text', text: 'Say hello.' }] },
      ] as OpenAI.Responses.ResponseInput,
      temperature: 0.3,
      top_p: 0.5,
      max_output_tokens: 64,
      metadata: { ticket: 'T-1' },
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          parameters: { type: 'object' },
        } as unknown as OpenAI.Responses.FunctionTool, // no `strict`, as the compliance suite sends it
      ],
      user: 'u-1',
    });
    expect(response.output_text).toBe('Echo: Say hello.');
    const sent = fake.requestsFor(MODEL)[0]!.body;
    expect(sent.instructions).toBe('Be terse.\n\nYou are a pirate.');
    expect(sent.temperature).toBe(0.3);
    expect(sent.input).toEqual([
      { role: 'developer', content: 'Answer in English.' },
      { role: 'assistant', content: 'Ahoy.' },
      { role: 'assistant', content: 'Aye.' },
      { role: 'user', content: 'Say hello.' },
    ]);
    expect(response).toMatchObject({
      instructions: 'Be terse.', temperature: 0.3, top_p: 0.5, max_output_tokens: 64, metadata: { ticket: 'T-1' }, user: 'u-1',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, description: null, strict: null }],
    }); // prettier-ignore
    // A GET says the same: the echo comes from the stored request.
    expect(await client.responses.retrieve(response.id)).toMatchObject({
      instructions: 'Be terse.',
      top_p: 0.5,
      metadata: { ticket: 'T-1' },
    });
  });

  it('DX-4 and DX-3: one execution per Idempotency-Key; a background plain response is cancelled', async () => {
    const options = { headers: { 'Idempotency-Key': 'plain-1' } };
    const first = await client.responses.create({ model: LLM, input: 'Once' }, options);
    const again = await client.responses.create({ model: LLM, input: 'Once' }, options);
    expect(again.id).toBe(first.id);
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
    fake.script(MODEL, { text: scriptedAnswer(200), deltaDelayMs: 100 });
    const created = await client.responses.create({ model: LLM, input: 'Long', background: true });
    expect(created).toMatchObject({ status: 'queued', background: true });
    await until(() => fake.requestsFor(MODEL)[1], { what: 'the model call' });
    expect(await client.responses.cancel(created.id)).toMatchObject({
      status: 'cancelled',
      background: true,
    });
  });
});

describe('OR-3: conversations by previous_response_id', () => {
  it('three turns: each model call receives the earlier turns (inputs and answers) before its own input', async () => {
    const one = await client.responses.create({ model: LLM, input: 'My name is Ada.' });
    const two = await client.responses.create({
      model: LLM,
      input: 'What is my name?',
      previous_response_id: one.id,
    });
    const three = await client.responses.create({
      model: LLM,
      input: 'Thanks.',
      previous_response_id: two.id,
    });
    expect(two.previous_response_id).toBe(one.id);
    expect(three.output_text).toBe('Echo: Thanks.');
    expect(modelInput(1)).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Echo: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    expect(modelInput(2)).toEqual([
      ...(modelInput(1) as unknown[]),
      { role: 'assistant', content: 'Echo: What is my name?' },
      { role: 'user', content: 'Thanks.' },
    ]);
  });

  it('store: false answers, then is gone: GET 404, previous_response_id 400 previous_response_not_found, its content expired', async () => {
    const unstored = await client.responses.create({ model: LLM, input: 'Forget me', store: false });
    expect(unstored).toMatchObject({ store: false, output_text: 'Echo: Forget me' });
    expect(await asError(client.responses.retrieve(unstored.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const err = await asError(
      client.responses.create({ model: LLM, input: 'And?', previous_response_id: unstored.id }),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err!.error).toEqual({
      message: `Previous response with id '${unstored.id}' not found.`,
      type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found',
    }); // prettier-ignore
    const pg = new PgClient({ connectionString: stack.database.url });
    await pg.connect();
    try {
      const { rows } = await pg.query(
        `select e.store, round(extract(epoch from (p.expires_at - e.finished_at)))::int as kept
         from executions e join execution_payloads p on p.execution_id = e.id where e.id = $1`,
        [unstored.id],
      );
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row).toEqual({ store: false, kept: 60 });
    } finally {
      await pg.end();
    }
  });

  it("another key's response, an unknown id and a non-UUID are the same 400 previous_response_not_found; nothing is asked", async () => {
    const mine = await client.responses.create({ model: LLM, input: 'Mine' });
    fake.reset();
    for (const [sdk, id] of [
      [other, mine.id],
      [client, '019a0000-0000-7000-8000-000000000000'],
      [client, 'resp_missing'],
    ] as const) {
      const err = await asError(sdk.responses.create({ model: LLM, input: 'Hi', previous_response_id: id }));
      expect(err?.status).toBe(400);
      expect(err?.code).toBe('previous_response_not_found');
    }
    expect(fake.requestsFor(MODEL)).toHaveLength(0);
  });

  it('function_call_output: its call_id must be a function_call of the conversation (400 tool_call_not_found), else the model is asked', async () => {
    const err = await asError(
      client.responses.create({
        model: LLM,
        input: [{ type: 'function_call_output', call_id: 'call_missing', output: '{}' }],
      }),
    );
    expect(err?.error).toMatchObject({
      code: 'tool_call_not_found',
      param: 'input',
      type: 'invalid_request_error',
    });
    const call = {
      type: 'function_call',
      call_id: 'call_1',
      name: 'get_weather',
      arguments: '{"city":"Oslo"}',
    } as const;
    const done = await client.responses.create({
      model: LLM,
      input: [
        { role: 'user', content: 'Weather?' },
        call,
        { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
      ],
    });
    expect(done.status).toBe('completed');
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
  });

  it("with prompt: input and previous_response_id add the conversation after the agent's rendered messages", async () => {
    const first = await client.responses.create({ model: LLM, input: 'Earlier question' });
    const agentTurn = await client.responses.create({
      prompt: { id: seeded.agentId, variables: { question: 'How do I rotate?' } },
      model: LLM,
      metadata: { pipeline: seeded.pipelineId, classification: 'internal' },
      previous_response_id: first.id,
      input: 'Keep it short.',
      temperature: 0.2,
    });
    expect(agentTurn).toMatchObject({
      status: 'completed',
      previous_response_id: first.id,
      temperature: 0.2,
      tools: [],
    });
    const sent = modelInput(1) as { role: string; content: string }[];
    expect(sent[0]!.content).toContain('Question: How do I rotate?');
    expect(sent.slice(1)).toEqual([
      { role: 'user', content: 'Earlier question' },
      { role: 'assistant', content: 'Echo: Earlier question' },
      { role: 'user', content: 'Keep it short.' },
    ]);
    const refused = await asError(
      client.responses.create({ prompt: { id: seeded.agentId, variables: { question: 'q' } }, model: LLM,
        metadata: { pipeline: seeded.pipelineId, classification: 'internal' }, instructions: 'x' }), // prettier-ignore
    );
    expect(refused?.error).toMatchObject({ param: 'instructions', code: 'unsupported_parameter' });
  });
});
