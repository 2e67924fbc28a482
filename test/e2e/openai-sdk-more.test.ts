// Issue 28, beyond "Done when": what the openai SDK sees when Temporal retries the model call
// mid-answer (item 6), failures and the SDK's own retries, permissions and unknown objects, agent
// versions, native executions read as responses, /openapi.json and README.md's Node example. API
// and worker processes on the real services, the fake model server, the unchanged openai package.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI, { type APIError } from 'openai';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { scriptedAnswer, seedAgent, type SeededAgent } from '../helpers/agent-streams';
import { createRetrievalAgent, seedPipeline } from '../helpers/knowledge';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { ROOT, STATE_DIR } from '../helpers/services';
import { until } from '../helpers/wait';

const MODEL = 'sdk-more';

let stack: ProcessStack;
let fake: FakeModelServer;
let seeded: SeededAgent;
let client: OpenAI;
/** HTTP requests the SDK sent through `client` (its own retries included). */
let sent = 0;

type Event = OpenAI.Responses.ResponseStreamEvent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  seeded = await seedAgent(stack.admin, fake, { model: MODEL });
  const { id, secret } = stack.admin.credentials!;
  client = new OpenAI({
    baseURL: `${stack.admin.baseUrl}/v1`,
    apiKey: `${id}.${secret}`,
    fetch: (url, init) => {
      sent += 1;
      return fetch(url, init);
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => {
  fake.reset();
  sent = 0;
});

const request = (question = 'How do I rotate the credentials?') => ({
  prompt: { id: seeded.agentId, variables: { question } },
  model: seeded.llmId,
  metadata: { pipeline: seeded.pipelineId, classification: 'internal' },
});

async function collect(stream: AsyncIterable<Event>): Promise<Event[]> {
  const events: Event[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const deltasOf = (events: Event[]) =>
  events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e] : []));

describe('item 6: a model call retried mid-answer, as the SDK sees it', () => {
  it('the new attempt says the same: the stream goes on where it was; the deltas concatenate to the answer once (2 model calls)', async () => {
    const answer = scriptedAnswer(10);
    fake.script(MODEL, { text: answer, deltaDelayMs: 20, sequence: [{ dropAfterDeltas: 4 }] });
    const events = await collect(await client.responses.create({ ...request(), stream: true }));
    expect(fake.requestsFor(MODEL)).toHaveLength(2);
    expect(
      deltasOf(events)
        .map((e) => e.delta)
        .join(''),
    ).toBe(answer);
    expect(events.filter((e) => e.type === 'response.in_progress')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { output_text: answer } });
  });

  it('the new attempt says something else: the response starts over (response.in_progress, a new item); the SDK helper shows only the new text', async () => {
    fake.script(MODEL, {
      text: 'First attempt words here',
      deltaDelayMs: 30,
      sequence: [{ dropAfterDeltas: 2 }],
    });
    const stream = client.responses.stream(request());
    const snapshots: string[] = [];
    stream.on('response.output_text.delta', (e) => snapshots.push(e.snapshot));
    const events: Event[] = [];
    stream.on('event', (e) => events.push(e));
    // The retry answers differently: scripted once the first attempt is under way.
    await until(() => fake.requestsFor(MODEL)[0], { what: 'the first model call' });
    fake.script(MODEL, { text: 'Second and final answer' });
    const response = await stream.finalResponse();
    expect(response.output_text).toBe('Second and final answer');
    expect(snapshots.at(-1)).toBe('Second and final answer');
    expect(snapshots.filter((s) => s.startsWith('First')).length).toBeGreaterThan(0);
    expect(
      snapshots.every(
        (s) => 'First attempt words here'.startsWith(s) || 'Second and final answer'.startsWith(s),
      ),
    ).toBe(true);
    const restart = events.findIndex((e, i) => i > 1 && e.type === 'response.in_progress');
    expect(events[restart]).toMatchObject({ response: { output: [] } });
    const items = [...new Set(deltasOf(events).map((e) => e.item_id))];
    expect(items).toHaveLength(2);
    expect(
      deltasOf(events)
        .filter((e) => e.item_id === items[1])
        .map((e) => e.delta)
        .join(''),
    ).toBe('Second and final answer');
  });
});

describe('failures, statuses and the SDK', () => {
  it('EX-7: the model fails every attempt before answering: InternalServerError 502, and the SDK does not repeat the request (one execution, 4 model calls)', async () => {
    fake.script(MODEL, { failFirst: { count: 4, status: 500, message: 'upstream down' } });
    const err = (await client.responses.create(request()).catch((e: unknown) => e)) as APIError;
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.status).toBe(502);
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(err.message).toContain('upstream down');
    expect(sent).toBe(1);
    expect(fake.requestsFor(MODEL)).toHaveLength(4);
  });

  it('a streamed create holds its status the same way (502, no retry); a background one reports the failure in-band', async () => {
    fake.script(MODEL, { failFirst: { count: 8, status: 500 } });
    const streamed = (await client.responses
      .create({ ...request(), stream: true })
      .catch((e) => e)) as APIError;
    expect(streamed.status).toBe(502);
    expect(sent).toBe(1);
    const events = await collect(
      await client.responses.create({ ...request(), stream: true, background: true }),
    );
    expect(events.slice(-2)).toMatchObject([
      { type: 'error', code: 'upstream_error' },
      { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error' } } },
    ]);
    const failed = await client.responses.retrieve(
      (events[0] as OpenAI.Responses.ResponseCreatedEvent).response.id,
    );
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
  });

  it('403 without execute on the LLM, 404 for an unknown agent or version, 400 naming an unknown field: the SDK error classes', async () => {
    const key = await stack.admin.post('/api_keys', {
      name: 'no-llm',
      permissions: ['execute:agents', 'execute:pipelines'],
    });
    const limited = new OpenAI({ baseURL: client.baseURL, apiKey: `${key.body.id}.${key.body.secret}` });
    const denied = (await limited.responses.create(request()).catch((e) => e)) as APIError;
    expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(denied.message).toBe(`403 API key lacks execute permission on LLM ${seeded.llmId}`);
    const unknown = (await client.responses
      .create({ ...request(), prompt: { id: 'no-such-agent', variables: {} } })
      .catch((e) => e)) as APIError;
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.message).toBe('404 Agent no-such-agent not found');
    const version = (await client.responses
      .create({ ...request(), prompt: { ...request().prompt, version: '9' } })
      .catch((e) => e)) as APIError;
    expect(version.message).toBe(`404 Agent ${seeded.agentId} has no version 9`);
    const extra = (await client.responses
      .create({ ...request(), inputs: 'Hello' } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .catch((e) => e)) as APIError;
    expect(extra).toBeInstanceOf(OpenAI.BadRequestError);
    expect(extra.error).toEqual({
      message: 'Unknown field: inputs',
      type: 'invalid_request_error',
      param: 'inputs',
      code: 'unknown_parameter',
    });
    expect(fake.requestsFor(MODEL)).toHaveLength(0);
  });

  it('a name the key may not execute answers as an unknown name: the same 404, no id of the object', async () => {
    const clientOf = async (name: string, permissions: string[]) => {
      const key = await stack.admin.post('/api_keys', { name, permissions });
      expect(key.status).toBe(201);
      return new OpenAI({
        baseURL: client.baseURL,
        apiKey: `${key.body.id}.${key.body.secret}`,
        maxRetries: 0,
      });
    };
    const answer = async (sdk: OpenAI, body: OpenAI.Responses.ResponseCreateParamsNonStreaming) => {
      const err = (await sdk.responses.create(body).catch((e) => e)) as APIError;
      return { status: err.status, error: err.error };
    };
    const llmName = (await stack.admin.get(`/llms/${seeded.llmId}`)).body.name as string;
    const agentName = (await stack.admin.get(`/agents/${seeded.agentId}`)).body.name as string;
    const noLlm = await clientOf('names-no-llm', ['execute:agents', 'execute:pipelines']);
    const unknownLlm = await answer(noLlm, { ...request(), model: 'no-such-llm' });
    expect(unknownLlm).toMatchObject({ status: 404 });
    const deniedLlm = await answer(noLlm, { ...request(), model: llmName });
    expect(JSON.stringify(deniedLlm)).not.toContain(seeded.llmId);
    expect(deniedLlm).toEqual(JSON.parse(JSON.stringify(unknownLlm).replaceAll('no-such-llm', llmName)));

    const noAgent = await clientOf('names-no-agent', ['execute:pipelines', 'execute:llms']);
    const unknownAgent = await answer(noAgent, {
      ...request(),
      prompt: { id: 'no-such-agent', variables: {} },
    });
    const deniedAgent = await answer(noAgent, { ...request(), prompt: { id: agentName, variables: {} } });
    expect(JSON.stringify(deniedAgent)).not.toContain(seeded.agentId);
    expect(deniedAgent).toEqual(
      JSON.parse(JSON.stringify(unknownAgent).replaceAll('no-such-agent', agentName)),
    );
    expect(fake.requestsFor(MODEL)).toHaveLength(0);
  });

  it('409: cancelling a completed response is the SDK ConflictError, and not retried', async () => {
    fake.script(MODEL, { text: 'Done already.' });
    const done = await client.responses.create(request());
    sent = 0;
    const err = (await client.responses.cancel(done.id).catch((e) => e)) as APIError;
    expect(err).toBeInstanceOf(OpenAI.ConflictError);
    expect(err.message).toBe(`409 Response ${done.id} cannot be cancelled: it is completed`);
    expect(sent).toBe(1);
  });
});

describe('one execution, two protocols', () => {
  it('an execution started by POST /agents/{id}/execute is a response: retrieve and its events', async () => {
    fake.script(MODEL, { text: 'Native answer.' });
    const native = await stack.admin.post(
      `/agents/${seeded.agentId}/execute`,
      { prompt: { question: 'Q?' }, classification: 'internal', stream: false },
      { 'x-pipeline-id': seeded.pipelineId, 'x-llm-id': seeded.llmId },
    );
    const id = native.headers.get('x-agentry-execution-id')!;
    const response = await until(
      async () => {
        const r = await client.responses.retrieve(id);
        return r.status === 'completed' ? r : undefined;
      },
      { what: 'the response to complete' },
    );
    expect(response.output_text).toBe('Native answer.');
    const events = await collect(await client.responses.retrieve(id, { stream: true }));
    expect(
      deltasOf(events)
        .map((e) => e.delta)
        .join(''),
    ).toBe('Native answer.');
  });

  it('prompt.version runs an earlier version of the agent (AG-11)', async () => {
    const agent = await stack.admin.post('/agents', {
      name: 'versioned',
      prompt: [
        { role: 'system', template: 'Be brief.' },
        { role: 'user', template: 'V1 {question}' },
      ],
      placeholders: [{ name: 'question', type: 'query' }],
    });
    expect(agent.status).toBe(201);
    const updated = await stack.admin.patch(`/agents/${agent.body.id}`, {
      prompt: [
        { role: 'system', template: 'Be brief.' },
        { role: 'user', template: 'V2 {question}' },
      ],
    });
    expect(updated.body.version).toBe(2);
    const ask = (version?: string) =>
      client.responses.create({
        ...request(),
        prompt: { id: 'versioned', variables: { question: 'q' }, ...(version ? { version } : {}) },
      });
    expect((await ask('1')).prompt).toMatchObject({ id: agent.body.id, version: '1' });
    expect((await ask()).prompt).toMatchObject({ version: '2' });
    const sentTexts = fake.requestsFor(MODEL).map((r) => JSON.stringify(r.body.input));
    expect(sentTexts[0]).toContain('V1 q');
    expect(sentTexts[1]).toContain('V2 q');
  });
});

describe('documentation', () => {
  it('/openapi.json documents the routes, Bearer authentication and the OpenAI error shape', async () => {
    const doc = (await stack.admin.get('/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/responses', '/v1/responses/{id}', '/v1/responses/{id}/cancel']),
    );
    const create = doc.paths['/v1/responses'].post;
    expect(create.security).toContainEqual({ bearer: [] });
    // `prompt` (an agent) and its `metadata` are optional since issue 34: without them the LLM answers.
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['model']);
    expect(create.responses['400'].content['application/json'].schema.required).toEqual(['error']);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it("README.md's Node example runs as written against the objects of the walk-through", async () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const block =
      /<!-- openai-sdk-example:start -->\s*```js\n([\s\S]*?)```\s*<!-- openai-sdk-example:end -->/.exec(
        readme,
      );
    expect(block).not.toBeNull();
    await seedPipeline(stack.admin, {
      name: 'product-kb',
      classification: 'internal',
      documents: ['Database credentials rotate every 30 days.'],
    });
    const llm = await stack.admin.post('/llms', {
      name: 'local-fake',
      endpoint: fake.url,
      model: 'demo',
      api_key: 'none',
    });
    expect(llm.status).toBe(201);
    await createRetrievalAgent(stack.admin, 'support-answers');
    fake.script('demo', { text: 'Every 30 days.', deltaDelayMs: 5 });
    const file = path.join(STATE_DIR, 'readme-openai-sdk.mjs');
    writeFileSync(file, block![1]!);
    const { id, secret } = stack.admin.credentials!;
    const { stdout } = await promisify(execFile)(process.execPath, [file], {
      env: { ...process.env, AGENTRY: stack.admin.baseUrl, AGENTRY_KEY: `${id}.${secret}` },
      timeout: 60_000,
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('Every 30 days.');
    expect(lines[1]).toMatch(/^[0-9a-f-]{36}: completed, 3 output tokens$/);
    expect(lines[2]).toMatch(/^[0-9a-f-]{36}: completed: Every 30 days\.$/);
    expect(fake.requestsFor('demo')).toHaveLength(2);
  });
});
