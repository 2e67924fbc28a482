// The WebSocket mode's limits (SPEC OR-5, issue 34 item 3) on the whole product in this process,
// with a 3 s connection lifetime and 1 s pings: the specification's error at the limit (after the
// running turn, queued ones not started), a client that answers no ping, the open-sockets gauge,
// the API's shutdown closing its sockets with 1001, and logs that carry no content.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { scriptedAnswer } from '../helpers/agent-streams';
import { startStack, type Stack } from '../helpers/stack';
import { until } from '../helpers/wait';
import { openSession, type Message, type Session } from '../helpers/websocket-session';

const MODEL = 'ws-limits';
const LIMIT_S = 3;

let stack: Stack;
let fake: FakeModelServer;
let key: string;

const open = (options = {}): Promise<Session> =>
  openSession(`${stack.url.replace('http', 'ws')}/v1/responses`, { authorization: `Bearer ${key}` }, options);
const create = (input: string) => ({ type: 'response.create', model: MODEL, input });

/** Every message until the socket closes, and its close code. */
async function untilClosed(session: Session): Promise<{ messages: Message[]; code: number }> {
  const { code } = await session.closed;
  return { messages: session.messages, code };
}

const gauge = async (): Promise<number> => {
  const text = (await stack.api.get('/metrics')).text;
  return Number(/^agentry_websocket_connections (\d+)$/m.exec(text)?.[1]);
};

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack({
    env: { AGENTRY_WEBSOCKET_LIMIT_SECONDS: String(LIMIT_S), AGENTRY_WEBSOCKET_PING_SECONDS: '1' },
  });
  expect(
    (await stack.api.post('/llms', { name: MODEL, endpoint: fake.url, model: MODEL, api_key: 'x' })).status,
  ).toBe(201);
  const res = await stack.api.post('/api_keys', { name: 'ws-limits', permissions: ['execute:llms'] });
  key = `${res.body.id}.${res.body.secret}`;
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('OR-5: a WebSocket connection is limited in time', () => {
  it('an idle socket at its limit gets websocket_connection_limit_reached, then a normal close', async () => {
    const started = Date.now();
    const session = await open();
    const { messages, code } = await untilClosed(session);
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIMIT_S * 1000 - 100);
    expect(messages).toEqual([
      {
        type: 'error',
        status: 400,
        error: {
          type: 'invalid_request_error',
          code: 'websocket_connection_limit_reached',
          message: `The connection reached its time limit (${LIMIT_S} s): open a new one`,
          param: null,
        },
      },
    ]);
    expect(code).toBe(1000);
  });

  it('a turn running at the limit ends first; a queued one is not started', async () => {
    // 40 deltas 100 ms apart: the turn runs past the 3 s limit wherever it starts.
    const answer = scriptedAnswer(40);
    fake.script(MODEL, { text: answer, deltaDelayMs: 100 });
    const session = await open();
    session.send(create('the long one'));
    session.send(create('never started'));
    const { messages, code } = await untilClosed(session);
    const completed = messages.findIndex((m) => m.type === 'response.completed');
    expect(messages[completed]!.response.output_text).toBe(answer);
    expect(messages.slice(completed + 1)).toMatchObject([
      { type: 'error', error: { code: 'websocket_connection_limit_reached' } },
    ]);
    expect(code).toBe(1000);
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
    fake.reset();
  });
});

describe('OR-5: pings, the gauge, shutdown', () => {
  it('a client that answers no ping is cut', async () => {
    const session = await open({ autoPong: false });
    const { code } = await untilClosed(session);
    expect(code).toBe(1006);
  });

  it('agentry_websocket_connections counts the open sockets; the logs name ids, never content', async () => {
    const before = await gauge();
    const session = await open();
    await until(async () => ((await gauge()) === before + 1 ? true : undefined));
    const turn = await session.turn(create('a secret word: marmalade'));
    expect(turn.at(-1)!.type).toBe('response.completed');
    session.ws.close();
    await until(async () => ((await gauge()) === before ? true : undefined));
    const logs = stack.logs.join('');
    expect(logs).toContain('"websocket opened"');
    expect(logs).toContain(turn[0]!.response.id);
    expect(logs).not.toContain('marmalade');
  });

  it("the API's shutdown closes its sockets with 1001 (the SDKs reconnect on it)", async () => {
    const session = await open();
    const stopping = stack.stop();
    expect((await session.closed).code).toBe(1001);
    await stopping;
    stack = undefined as unknown as Stack;
  });
});
