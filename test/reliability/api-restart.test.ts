// The API process killed (SIGKILL) and restarted while an execution streams (DX-1, DX-2, DX-4,
// §9.6). The workflow runs on in the worker; the client that lost its connection re-attaches
// to the new API process after the last event it has (SSE, Last-Event-ID) or repeats its POST
// under the same Idempotency-Key, and in every way ends with the answer exactly once; the answer
// is readable from the execution afterwards. The model is called once.
import { randomUUID } from 'node:crypto';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { parseSse } from '../helpers/http';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { until, waitFor } from '../helpers/wait';
import {
  deltaCount,
  executeAgent,
  expectCleanAnswer,
  resets,
  scriptedAnswer,
  seedAgent,
  type SeededAgent,
} from '../helpers/agent-streams';

const MODEL = 'restart-gpt';
/** 80 words, 100 ms apart: the execution is still running when the new API process is up. */
const ANSWER = scriptedAnswer(80);

let stack: ProcessStack;
let fake: FakeModelServer;
let agent: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  agent = await seedAgent(stack.admin, fake, { model: MODEL });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('reliability: the API restarted while an execution runs', () => {
  it('DX-2/DX-4/DX-1: the API is SIGKILLed mid-stream and restarted: re-attaching after Last-Event-ID yields exactly the rest, the repeated POST (same Idempotency-Key) the whole answer, GET /executions/{id} the answer; 1 model call', async () => {
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100 });
    const idempotency = { 'Idempotency-Key': `rel-${randomUUID()}` };
    const first = await executeAgent(stack.admin, agent, idempotency);
    expect(first.status).toBe(200);
    const { executionId } = first;
    await waitFor(() => deltaCount(first.events) >= 5, { what: 'the first deltas', timeoutMs: 20_000 });

    await stack.restartApi('SIGKILL');
    await first.ended.catch(() => undefined); // the connection died with the process
    const received = [...first.events];
    expect(received.some((e) => e.type === 'done' || e.type === 'error')).toBe(false);
    const lastSeq = received[received.length - 1].seq as number;

    // An EventSource reconnects to the new process with the id of the last event it got.
    const reattached = await fetch(`${stack.admin.baseUrl}/executions/${executionId}/stream`, {
      headers: stack.admin.headers({ accept: 'text/event-stream', 'last-event-id': String(lastSeq) }),
    });
    expect(reattached.status).toBe(200);
    expect(reattached.headers.get('content-type')).toContain('text/event-stream');
    const messages = parseSse(await reattached.text()).filter((m) => m.data !== undefined);
    const rest = messages.map((m) => JSON.parse(m.data!));
    expect(messages.map((m) => Number(m.id))).toEqual(rest.map((e) => e.seq));
    expect(messages.map((m) => m.event)).toEqual(rest.map((e) => e.type));
    expect(rest[0].seq).toBe(lastSeq + 1);
    const whole = [...received, ...rest];
    expectCleanAnswer(whole, ANSWER, 1);
    expect(resets(whole)).toHaveLength(0);

    // The client's own retry of the POST attaches to the same execution and replays it whole.
    const repeated = await executeAgent(stack.admin, agent, idempotency);
    expect(repeated.status).toBe(200);
    expect(repeated.executionId).toBe(executionId);
    await repeated.ended;
    expect(repeated.events).toEqual(whole);

    const record = await until(
      async () => {
        const res = await stack.admin.get(`/executions/${executionId}`);
        return res.status === 200 && res.body.status !== 'running' ? res.body : undefined;
      },
      { what: 'the execution to succeed', timeoutMs: 40_000 },
    );
    expect(record).toMatchObject({ id: executionId, status: 'succeeded', attempts: 1, answer: ANSWER });
    expect(fake.requestsFor(MODEL).map((r) => r.aborted)).toEqual([false]);
  }, 90_000);
});
