// Issue 34 item 3, SPEC OR-5: the WebSocket mode of /v1/responses against separate API and worker
// processes on the real services and the fake model server, through openai's own ResponsesWS and a
// plain \`ws\` client read as the Open Responses compliance suite reads one: turns, continuation,
// refusals, authentication (reconnects: responses-websocket-reconnect.test.ts). What the model
// received is read from the fake's recorded requests.
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import type { ResponsesServerEvent } from 'openai/resources/responses/responses';
import { seedAgent, type SeededAgent } from '../helpers/agent-streams';
import { waitFor } from '../helpers/wait';
import { openSession } from '../helpers/websocket-session';
import { bearer, startWebSocketStack, type WebSocketStack } from '../helpers/websocket-stack';

let ws: WebSocketStack;
let agent: SeededAgent;

beforeAll(async () => {
  ws = await startWebSocketStack('websocket');
  agent = await seedAgent(ws.stack.admin, ws.fake, { model: 'ws-agent' });
});

afterAll(() => ws?.stop());

beforeEach(() => ws.fake.reset());

const modelInputText = (i: number) => JSON.stringify(ws.fake.requestsFor(ws.model)[i]!.body.input);

describe('OR-5: turns on one socket', () => {
  it('several responses on one socket, in the order sent, each its own events numbered from 0 (openai ResponsesWS)', async () => {
    const client = new OpenAI({ baseURL: `${ws.stack.admin.baseUrl}/v1`, apiKey: ws.key });
    const rws = new ResponsesWS(client);
    const events: ResponsesServerEvent[] = [];
    const errors: unknown[] = [];
    rws.on('event', (e) => events.push(e));
    rws.on('error', (e) => errors.push(e));
    // Both sent at once: the second waits for the first (one response in flight per socket).
    rws.send(ws.create({ input: 'first question', store: false }) as never);
    rws.send(ws.create({ input: [{ type: 'message', role: 'user', content: 'second question' }] }) as never);
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
    const execution = await ws.owner.get(`/executions/${two!.response.id}`);
    expect(execution.body).toMatchObject({ kind: 'llm_query', answer: 'Echo: second question' });
  });

  it('a store: false response continues on its socket from memory, with the whole conversation', async () => {
    const session = await ws.open();
    const first = await session.turn(ws.create({ store: false, input: 'Remember the code word: cobalt' }));
    const id = first.at(-1)!.response.id as string;
    const second = await session.turn(
      ws.create({ store: false, previous_response_id: id, input: 'What is the code word?' }),
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
    const a = await ws.open();
    const id = (await a.turn(ws.create({ store: false, input: 'only on socket A' }))).at(-1)!.response
      .id as string;
    const b = await ws.open();
    for (const previous of [id, 'resp_missing_1', '0190a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d']) {
      const turn = await b.turn(ws.create({ store: false, previous_response_id: previous, input: 'go on' }));
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
    const next = await b.turn(ws.create({ input: 'start over' }));
    expect(next[0]!.type).toBe('response.created');
    expect(next.at(-1)!.type).toBe('response.completed');
    a.ws.close();
    b.ws.close();
  });

  it('a continuation that fails forgets what it continued (the specification: evicted)', async () => {
    const session = await ws.open();
    const id = (await session.turn(ws.create({ store: false, input: 'ember' }))).at(-1)!.response
      .id as string;
    const bad = await session.turn(
      ws.create({
        store: false,
        previous_response_id: id,
        input: [{ type: 'function_call_output', call_id: 'call_missing', output: '{}' }],
      }),
    );
    expect(bad).toMatchObject([
      { type: 'error', status: 400, error: { code: 'tool_call_not_found', param: 'input' } },
    ]);
    const stale = await session.turn(ws.create({ store: false, previous_response_id: id, input: 'stale' }));
    expect(stale).toMatchObject([{ type: 'error', error: { code: 'previous_response_not_found' } }]);
    session.ws.close();
  });
});

describe('OR-5: an agent on a socket', () => {
  it("a create with prompt runs the agent as HTTP's does, with its checks' words", async () => {
    const session = await ws.open(`${ws.stack.env.adminKeyId}.${ws.stack.env.adminKeySecret}`);
    const request = {
      model: agent.llmId,
      metadata: { pipeline: agent.pipelineId, classification: 'internal' },
    };
    const turn = await session.turn(
      ws.create({ ...request, prompt: { id: agent.agentId, variables: { question: 'How often?' } } }),
    );
    expect(turn.at(-1)).toMatchObject({
      type: 'response.completed',
      response: { prompt: { id: agent.agentId }, metadata: { pipeline: agent.pipelineId } },
    });
    expect(ws.fake.requestsFor('ws-agent')).toHaveLength(1);
    const refused = await session.turn(
      ws.create({ ...request, prompt: { id: agent.agentId, variables: {} } }),
    );
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
  // A create's fields (the LLM added), or the message as sent.
  it.each([
    ['stream', { input: 'x', stream: true }, 'unsupported_parameter', 'stream'],
    ['background', { input: 'x', background: false }, 'unsupported_parameter', 'background'],
    ['stream_options', { input: 'x', stream_options: {} }, 'unsupported_parameter', 'stream_options'],
    ['an unknown field', { input: 'x', inputs: 'y' }, 'unknown_parameter', 'inputs'],
    ['no model', { type: 'response.create', input: 'x' }, 'missing_required_parameter', 'model'],
    ['another event type', { type: 'session.update' }, 'invalid_value', 'type'],
    ['no JSON', 'not json', 'invalid_json', null],
  ])('%s: a 400 naming it, and the socket serves the next turn', async (_what, given, code, param) => {
    const event = typeof given === 'string' || 'type' in given ? given : ws.create(given);
    const session = await ws.open();
    const turn = await session.turn(event);
    expect(turn).toEqual([
      {
        type: 'error',
        status: 400,
        error: { type: 'invalid_request_error', code, param, message: expect.any(String) },
      },
    ]);
    if (param) expect(turn[0]!.error.message).toContain(param);
    expect((await session.turn(ws.create({ input: 'and now' }))).at(-1)!.type).toBe('response.completed');
    session.ws.close();
  });

  it('a model that fails mid-answer: one error message with the response id, not error then response.failed', async () => {
    ws.fake.script(ws.model, { failFirst: { count: 10, status: 400, message: 'bad request upstream' } });
    const session = await ws.open();
    const turn = await session.turn(ws.create({ input: 'fail please' }));
    expect(turn.map((m) => m.type)).toEqual(['response.created', 'response.in_progress', 'error']);
    expect(turn.at(-1)).toMatchObject({
      status: 502,
      response_id: turn[0]!.response.id,
      sequence_number: 2,
      error: { type: 'server_error', code: 'upstream_error' },
    });
    ws.fake.reset();
    expect((await session.turn(ws.create({ input: 'and now' }))).at(-1)!.type).toBe('response.completed');
    session.ws.close();
  });
});

describe('OR-5: the upgrade is authenticated as HTTP /v1 is', () => {
  const refused = (headers: Record<string, string>) =>
    openSession(ws.url(), headers).then(
      () => undefined,
      (err: { status?: number; body?: unknown }) => err,
    );

  it('no key, a wrong key: 401 in OpenAI error shape before any upgrade', async () => {
    expect(await refused({})).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
    const [id] = ws.key.split('.');
    expect(await refused(bearer(`${id}.wrong-secret`))).toMatchObject({
      status: 401,
      body: { error: { type: 'invalid_request_error', code: 'invalid_api_key' } },
    });
  });

  it('the x-api-key headers open it too; another path is a 404; the query is checked before the upgrade', async () => {
    const [id, secret] = ws.key.split('.') as [string, string];
    const session = await openSession(ws.url(), { 'x-api-key': id, 'x-api-key-secret': secret });
    expect((await session.turn(ws.create({ input: 'by headers' }))).at(-1)!.type).toBe('response.completed');
    session.ws.close();
    const other = await openSession(`ws://127.0.0.1:${ws.stack.api.port}/v1/chat`, bearer(ws.key)).catch(
      (e: unknown) => e,
    );
    expect(other).toMatchObject({ status: 404 });
    const query = await openSession(ws.url(undefined, '?starting_after=3'), bearer(ws.key)).catch(
      (e: unknown) => e,
    );
    expect(query).toMatchObject({
      status: 400,
      body: { error: { message: expect.stringContaining('response_id') } },
    });
  });
});
