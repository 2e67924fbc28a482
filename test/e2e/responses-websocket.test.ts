// Issue 34 item 3, SPEC OR-5: the WebSocket mode of /v1/responses against separate API and worker
// processes on the real services and the fake model server, through openai's own ResponsesWS
// (reconnects included) and a plain `ws` client read as the Open Responses compliance suite reads
// one. What the model received is read from the fake's recorded requests.
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import type { ResponsesServerEvent } from 'openai/resources/responses/responses';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { scriptedAnswer, seedAgent, type SeededAgent } from '../helpers/agent-streams';
import { startCuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy';
import type { Api } from '../helpers/http';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { until, waitFor } from '../helpers/wait';
import { openSession, type Message, type Session } from '../helpers/websocket-session';

const MODEL = 'websocket';
const LLM = `ws-${MODEL}`;

let stack: ProcessStack;
let fake: FakeModelServer;
let proxy: CuttingProxy;
let key: string;
let otherKey: string;
let owner: Api;
let agent: SeededAgent;

const wsUrl = (port: number, query = '') => `ws://127.0.0.1:${port}/v1/responses${query}`;
const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });
const apiPort = () => stack.api.port!;
const open = (apiKey = key, query = ''): Promise<Session> =>
  openSession(wsUrl(apiPort(), query), bearer(apiKey));
const create = (fields: Record<string, unknown>) => ({ type: 'response.create', model: LLM, ...fields });

async function keyFor(name: string): Promise<string> {
  const res = await stack.admin.post('/api_keys', { name, permissions: ['execute:llms'] });
  expect(res.status).toBe(201);
  owner ??= stack.admin.as({ id: res.body.id, secret: res.body.secret });
  return `${res.body.id}.${res.body.secret}`;
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  const llm = await stack.admin.post('/llms', {
    name: LLM,
    endpoint: fake.url,
    model: MODEL,
    api_key: 'sk-x',
  });
  expect(llm.status).toBe(201);
  key = await keyFor('ws-app');
  otherKey = await keyFor('ws-other-app');
  proxy = await startCuttingProxy(apiPort());
  agent = await seedAgent(stack.admin, fake, { model: 'ws-agent' });
});

afterAll(async () => {
  await proxy?.close();
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

const modelInputText = (i: number) => JSON.stringify(fake.requestsFor(MODEL)[i]!.body.input);

describe('OR-5: turns on one socket', () => {
  it('several responses on one socket, in the order sent, each its own events numbered from 0 (openai ResponsesWS)', async () => {
    const client = new OpenAI({ baseURL: `${stack.admin.baseUrl}/v1`, apiKey: key });
    const rws = new ResponsesWS(client);
    const events: ResponsesServerEvent[] = [];
    const errors: unknown[] = [];
    rws.on('event', (e) => events.push(e));
    rws.on('error', (e) => errors.push(e));
    // Both sent at once: the second waits for the first (one response in flight per socket).
    rws.send(create({ input: 'first question', store: false }) as never);
    rws.send(create({ input: [{ type: 'message', role: 'user', content: 'second question' }] }) as never);
    await waitFor(() => events.filter((e) => e.type === 'response.completed').length === 2);
    rws.close();
    expect(errors).toEqual([]);
    const ends = events.flatMap((e, i) => (e.type === 'response.completed' ? [i] : []));
    const [first, second] = [events.slice(0, ends[0]! + 1), events.slice(ends[0]! + 1)];
    for (const turn of [first, second]) {
      expect(turn.map((e) => e.sequence_number)).toEqual(turn.map((_, i) => i));
      expect(turn[0]!.type).toBe('response.created');
    }
    const [one, two] = [first.at(-1), second.at(-1)] as OpenAI.Responses.ResponseCompletedEvent[];
    expect(one!.response).toMatchObject({
      status: 'completed',
      store: false,
      output_text: 'Echo: first question',
    });
    expect(two!.response).toMatchObject({
      status: 'completed',
      store: true,
      output_text: 'Echo: second question',
    });
    expect(one!.response.id).not.toBe(two!.response.id);
    // A WebSocket turn is the same durable direct query as an HTTP create.
    const execution = await owner.get(`/executions/${two!.response.id}`);
    expect(execution.body).toMatchObject({ kind: 'llm_query', answer: 'Echo: second question' });
  });

  it('a store: false response continues on its socket from memory, with the whole conversation', async () => {
    const session = await open();
    const first = await session.turn(create({ store: false, input: 'Remember the code word: cobalt' }));
    const id = first.at(-1)!.response.id as string;
    const second = await session.turn(
      create({ store: false, previous_response_id: id, input: 'What is the code word?' }),
    );
    expect(second.at(-1)).toMatchObject({
      type: 'response.completed',
      response: { previous_response_id: id },
    });
    const input = modelInputText(1);
    for (const text of [
      'Remember the code word: cobalt',
      'Echo: Remember the code word: cobalt',
      'What is the code word?',
    ])
      expect(input).toContain(text);
    session.ws.close();
  });

  it('another socket cannot continue it: previous_response_not_found, as for an unknown id; the socket goes on', async () => {
    const a = await open();
    const id = (await a.turn(create({ store: false, input: 'only on socket A' }))).at(-1)!.response
      .id as string;
    const b = await open();
    for (const previous of [id, 'resp_missing_1', '0190a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d']) {
      const turn = await b.turn(create({ store: false, previous_response_id: previous, input: 'go on' }));
      expect(turn).toEqual([
        {
          type: 'error',
          status: 400,
          error: {
            type: 'invalid_request_error',
            code: 'previous_response_not_found',
            message: `Previous response with id '${previous}' not found.`,
            param: 'previous_response_id',
          },
        },
      ]);
    }
    // Exactly one message per failed turn: the next message is the next turn's first.
    const next = await b.turn(create({ input: 'start over' }));
    expect(next[0]!.type).toBe('response.created');
    expect(next.at(-1)!.type).toBe('response.completed');
    a.ws.close();
    b.ws.close();
  });

  it('a continuation that fails forgets what it continued (the specification: evicted)', async () => {
    const session = await open();
    const id = (await session.turn(create({ store: false, input: 'ember' }))).at(-1)!.response.id as string;
    const bad = await session.turn(
      create({
        store: false,
        previous_response_id: id,
        input: [{ type: 'function_call_output', call_id: 'call_missing', output: '{}' }],
      }),
    );
    expect(bad).toMatchObject([
      { type: 'error', status: 400, error: { code: 'tool_call_not_found', param: 'input' } },
    ]);
    const stale = await session.turn(create({ store: false, previous_response_id: id, input: 'stale' }));
    expect(stale).toMatchObject([{ type: 'error', error: { code: 'previous_response_not_found' } }]);
    session.ws.close();
  });
});

describe('OR-5: an agent on a socket', () => {
  it("a create with prompt runs the agent as HTTP's does, with its checks' words", async () => {
    const session = await open(`${stack.env.adminKeyId}.${stack.env.adminKeySecret}`);
    const request = {
      model: agent.llmId,
      metadata: { pipeline: agent.pipelineId, classification: 'internal' },
    };
    const turn = await session.turn(
      create({ ...request, prompt: { id: agent.agentId, variables: { question: 'How often?' } } }),
    );
    expect(turn.at(-1)).toMatchObject({
      type: 'response.completed',
      response: { prompt: { id: agent.agentId }, metadata: { pipeline: agent.pipelineId } },
    });
    expect(fake.requestsFor('ws-agent')).toHaveLength(1);
    const refused = await session.turn(create({ ...request, prompt: { id: agent.agentId, variables: {} } }));
    expect(refused).toMatchObject([
      {
        type: 'error',
        status: 400,
        error: {
          code: 'missing_query_value',
          param: 'prompt.variables.question',
          message: 'Missing values for query placeholders: question',
        },
      },
    ]);
    session.ws.close();
  });
});

describe('OR-5: what a turn refuses, one message each', () => {
  it.each([
    ['stream', create({ input: 'x', stream: true }), 'unsupported_parameter', 'stream'],
    ['background', create({ input: 'x', background: false }), 'unsupported_parameter', 'background'],
    ['stream_options', create({ input: 'x', stream_options: {} }), 'unsupported_parameter', 'stream_options'],
    ['an unknown field', create({ input: 'x', inputs: 'y' }), 'unknown_parameter', 'inputs'],
    ['no model', { type: 'response.create', input: 'x' }, 'missing_required_parameter', 'model'],
    ['another event type', { type: 'session.update' }, 'invalid_value', 'type'],
    ['no JSON', 'not json', 'invalid_json', null],
  ])('%s: a 400 naming it, and the socket serves the next turn', async (_what, event, code, param) => {
    const session = await open();
    const turn = await session.turn(event);
    expect(turn).toEqual([
      {
        type: 'error',
        status: 400,
        error: { type: 'invalid_request_error', code, param, message: expect.any(String) },
      },
    ]);
    if (param) expect(turn[0]!.error.message).toContain(param);
    expect((await session.turn(create({ input: 'and now' }))).at(-1)!.type).toBe('response.completed');
    session.ws.close();
  });

  it('a model that fails mid-answer: one error message with the response id, not error then response.failed', async () => {
    fake.script(MODEL, { failFirst: { count: 10, status: 400, message: 'bad request upstream' } });
    const session = await open();
    const turn = await session.turn(create({ input: 'fail please' }));
    expect(turn.map((m) => m.type)).toEqual(['response.created', 'response.in_progress', 'error']);
    expect(turn.at(-1)).toMatchObject({
      status: 502,
      response_id: turn[0]!.response.id,
      sequence_number: 2,
      error: { type: 'server_error', code: 'upstream_error' },
    });
    fake.reset();
    expect((await session.turn(create({ input: 'and now' }))).at(-1)!.type).toBe('response.completed');
    session.ws.close();
  });
});

describe('OR-5: the upgrade is authenticated as HTTP /v1 is', () => {
  const refused = (headers: Record<string, string>) =>
    openSession(wsUrl(apiPort()), headers).then(
      () => undefined,
      (err: { status?: number; body?: unknown }) => err,
    );

  it('no key, a wrong key: 401 in OpenAI error shape before any upgrade', async () => {
    expect(await refused({})).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
    const [id] = key.split('.');
    expect(await refused(bearer(`${id}.wrong-secret`))).toMatchObject({
      status: 401,
      body: { error: { type: 'invalid_request_error', code: 'invalid_api_key' } },
    });
  });

  it('the x-api-key headers open it too; another path is a 404; the query is checked before the upgrade', async () => {
    const [id, secret] = key.split('.') as [string, string];
    const session = await openSession(wsUrl(apiPort()), { 'x-api-key': id, 'x-api-key-secret': secret });
    expect((await session.turn(create({ input: 'by headers' }))).at(-1)!.type).toBe('response.completed');
    session.ws.close();
    const other = await openSession(`ws://127.0.0.1:${apiPort()}/v1/chat`, bearer(key)).catch(
      (e: unknown) => e,
    );
    expect(other).toMatchObject({ status: 404 });
    const query = await openSession(wsUrl(apiPort(), '?starting_after=3'), bearer(key)).catch(
      (e: unknown) => e,
    );
    expect(query).toMatchObject({
      status: 400,
      body: { error: { message: expect.stringContaining('response_id') } },
    });
  });
});

describe('OR-5: a dropped socket loses nothing', () => {
  it('the network drops mid-answer: ResponsesWS reconnects with response_id and starting_after and gets the rest once, then continues the conversation', async () => {
    const answer = scriptedAnswer(24);
    fake.script(MODEL, { text: answer, deltaDelayMs: 60 });
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${proxy.port}/v1`, apiKey: key });
    const events: ResponsesServerEvent[] = [];
    let responseId: string | undefined;
    const rws = new ResponsesWS(client, {
      reconnect: {
        initialDelay: 100,
        onReconnecting: () => ({
          parameters: { response_id: responseId, starting_after: events.at(-1)!.sequence_number },
        }),
      },
    });
    rws.on('error', () => undefined);
    rws.on('event', (e) => {
      events.push(e);
      if (e.type === 'response.created') responseId = e.response.id;
    });
    rws.send(create({ input: 'count', store: false }) as never);
    await waitFor(() => events.filter((e) => e.type === 'response.output_text.delta').length >= 5);
    expect(proxy.cut({ silently: true })).toBe(1);
    const done = await until(() => events.find((e) => e.type === 'response.completed'), {
      timeoutMs: 30_000,
    });
    const deltas = events.filter((e) => e.type === 'response.output_text.delta');
    expect(deltas.map((e) => (e as { delta: string }).delta).join('')).toBe(answer);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(done).toMatchObject({ response: { id: responseId, output_text: answer } });
    expect(proxy.accepted).toBe(2);
    expect(fake.requestsFor(MODEL)).toHaveLength(1);

    // The resumed store: false response is this socket's now: it continues from memory.
    fake.reset();
    const resumed = responseId;
    const before = events.length;
    rws.send(create({ store: false, previous_response_id: resumed, input: 'next' }) as never);
    const next = await until(() => events.slice(before).find((e) => e.type === 'response.completed'));
    expect(next).toMatchObject({ response: { previous_response_id: resumed } });
    expect(modelInputText(0)).toContain(answer);
    rws.close();
  });

  it('a socket that drops never cancels its execution: the answer completes and is read later', async () => {
    const answer = scriptedAnswer(12);
    fake.script(MODEL, { text: answer, deltaDelayMs: 50 });
    const session = await openSession(wsUrl(proxy.port), bearer(key));
    session.send(create({ input: 'long answer' }));
    const created = await session.next();
    expect(created.type).toBe('response.created');
    await session.next();
    proxy.cut();
    expect((await session.closed).code).toBe(1006);
    const execution = await until(
      async () => {
        const res = await owner.get(`/executions/${created.response.id}`);
        return res.body.status === 'running' ? undefined : res.body;
      },
      { timeoutMs: 30_000 },
    );
    expect(execution).toMatchObject({ status: 'succeeded', answer, attempts: 1 });
  });

  it('another key cannot resume a response: not_found on the socket, which then serves turns', async () => {
    const mine = await open();
    const id = (await mine.turn(create({ input: 'mine' }))).at(-1)!.response.id as string;
    mine.ws.close();
    const theirs = await open(otherKey, `?response_id=${id}&starting_after=2`);
    expect(await theirs.next()).toMatchObject({ type: 'error', status: 404, error: { code: 'not_found' } });
    expect((await theirs.turn(create({ input: 'theirs' }))).at(-1)!.type).toBe('response.completed');
    theirs.ws.close();
    // The owner resumes it after its end: the events after 2 exactly, the last the completed response.
    const again = await open(key, `?response_id=${id}&starting_after=2`);
    const rest: Message[] = [];
    for (let m = await again.next(); ; m = await again.next()) {
      rest.push(m);
      if (m.type === 'response.completed') break;
    }
    expect(rest[0]!.sequence_number).toBe(3);
    expect(rest.at(-1)!.response).toMatchObject({ id, output_text: 'Echo: mine' });
    again.ws.close();
  });
});
