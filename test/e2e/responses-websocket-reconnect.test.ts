// Issue 34 item 3, SPEC OR-5: a WebSocket of /v1/responses that drops loses nothing. A TCP proxy
// cuts the client's connection mid-answer (the server left unaware, as when a network drops
// silently); openai's ResponsesWS reconnects with \`response_id\` and \`starting_after\` and gets the
// rest of the answer once, also from a new API process after a restart; a drop never cancels;
// resuming is for the response's key only.
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import type { ResponsesServerEvent } from 'openai/resources/responses/responses';
import { scriptedAnswer } from '../helpers/agent-streams';
import { until, waitFor } from '../helpers/wait';
import { openSession, type Message } from '../helpers/websocket-session';
import { bearer, startWebSocketStack, type WebSocketStack } from '../helpers/websocket-stack';

let ws: WebSocketStack;

beforeAll(async () => {
  ws = await startWebSocketStack('websocket-drop');
});

afterAll(() => ws?.stop());

beforeEach(() => ws.fake.reset());

const modelInputText = (i: number) => JSON.stringify(ws.fake.requestsFor(ws.model)[i]!.body.input);

/**
 * openai's ResponsesWS as its documentation has a client resume: on a reconnect, the query names
 * the response it was reading and the last event it had. Every event it receives is kept.
 */
function resumingClient(baseURL: string, retry: { maxRetries?: number; maxDelay?: number } = {}) {
  const client = new OpenAI({ baseURL, apiKey: ws.key });
  const events: ResponsesServerEvent[] = [];
  let responseId: string | undefined;
  const rws = new ResponsesWS(client, {
    reconnect: {
      initialDelay: 100,
      ...retry,
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
  return { rws, events, responseId: () => responseId };
}

/** The deltas joined, the numbering without a gap or a repeat, the one completed response. */
async function expectWholeAnswer(events: ResponsesServerEvent[], id: string | undefined, answer: string) {
  const done = await until(() => events.find((e) => e.type === 'response.completed'), { timeoutMs: 30_000 });
  const deltas = events.filter((e) => e.type === 'response.output_text.delta');
  expect(deltas.map((e) => (e as { delta: string }).delta).join('')).toBe(answer);
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  expect(done).toMatchObject({ response: { id, output_text: answer } });
}

describe('OR-5: a dropped socket loses nothing', () => {
  it('the network drops mid-answer: ResponsesWS reconnects with response_id and starting_after and gets the rest once, then continues the conversation', async () => {
    const answer = scriptedAnswer(24);
    ws.fake.script(ws.model, { text: answer, deltaDelayMs: 60 });
    const { rws, events, responseId } = resumingClient(`http://127.0.0.1:${ws.proxy.port}/v1`);
    rws.send(ws.create({ input: 'count', store: false }) as never);
    await waitFor(() => events.filter((e) => e.type === 'response.output_text.delta').length >= 5);
    expect(ws.proxy.cut({ silently: true })).toBe(1);
    await expectWholeAnswer(events, responseId(), answer);
    expect(ws.proxy.accepted).toBe(2);
    expect(ws.fake.requestsFor(ws.model)).toHaveLength(1);

    // The resumed store: false response is this socket's now: it continues from memory.
    ws.fake.reset();
    const resumed = responseId();
    const before = events.length;
    rws.send(ws.create({ store: false, previous_response_id: resumed, input: 'next' }) as never);
    const next = await until(() => events.slice(before).find((e) => e.type === 'response.completed'));
    expect(next).toMatchObject({ response: { previous_response_id: resumed } });
    expect(modelInputText(0)).toContain(answer);
    rws.close();
  });

  it('the API restarts mid-answer (SIGTERM: 1001 to its sockets): ResponsesWS resumes the response on the new process', async () => {
    const answer = scriptedAnswer(40);
    ws.fake.script(ws.model, { text: answer, deltaDelayMs: 100 });
    const { rws, events, responseId } = resumingClient(`${ws.stack.admin.baseUrl}/v1`, {
      maxRetries: 10,
      maxDelay: 1000,
    });
    const closes: number[] = [];
    rws.on('reconnecting', (e) => closes.push(e.closeCode));
    rws.send(ws.create({ input: 'count slowly' }) as never);
    await waitFor(() => events.filter((e) => e.type === 'response.output_text.delta').length >= 3);
    await ws.stack.restartApi('SIGTERM');
    await expectWholeAnswer(events, responseId(), answer);
    expect(closes[0]).toBe(1001);
    expect(ws.fake.requestsFor(ws.model)).toHaveLength(1);
    rws.close();
  });

  it('a socket that drops never cancels its execution: the answer completes and is read later', async () => {
    const answer = scriptedAnswer(12);
    ws.fake.script(ws.model, { text: answer, deltaDelayMs: 50 });
    const session = await openSession(ws.url(ws.proxy.port), bearer(ws.key));
    session.send(ws.create({ input: 'long answer' }));
    const created = await session.next();
    expect(created.type).toBe('response.created');
    await session.next();
    ws.proxy.cut();
    expect((await session.closed).code).toBe(1006);
    const execution = await until(
      async () => {
        const res = await ws.owner.get(`/executions/${created.response.id}`);
        return res.body.status === 'running' ? undefined : res.body;
      },
      { timeoutMs: 30_000 },
    );
    expect(execution).toMatchObject({ status: 'succeeded', answer, attempts: 1 });
  });

  it('another key cannot resume a response: not_found on the socket, which then serves turns', async () => {
    const mine = await ws.open();
    const id = (await mine.turn(ws.create({ input: 'mine' }))).at(-1)!.response.id as string;
    mine.ws.close();
    const theirs = await ws.open(ws.otherKey, `?response_id=${id}&starting_after=2`);
    expect(await theirs.next()).toMatchObject({ type: 'error', status: 404, error: { code: 'not_found' } });
    expect((await theirs.turn(ws.create({ input: 'theirs' }))).at(-1)!.type).toBe('response.completed');
    theirs.ws.close();
    // The owner resumes it after its end: the events after 2 exactly, the last the completed response.
    const again = await ws.open(ws.key, `?response_id=${id}&starting_after=2`);
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
