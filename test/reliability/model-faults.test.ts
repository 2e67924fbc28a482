// Model server faults on real processes (LLM-3, EX-7, §9.5): bursts of 429 and 500 answers that
// the retry policy absorbs, a burst longer than the retry budget, and a stream that stalls
// mid-answer. The fake server counts every model call.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { TEMPORAL_ADDRESS } from '../helpers/services';
import {
  executeAgent,
  expectCleanAnswer,
  resets,
  scriptedAnswer,
  seedAgent,
  type SeededAgent,
} from '../helpers/agent-streams';
import { activityRuns, finishedRecord } from './support';

const MODEL = 'faulty-gpt';
const ANSWER = scriptedAnswer(20);
/** AGENTRY_LLM_MAX_ATTEMPTS of the stack. */
const MAX_ATTEMPTS = 4;

let stack: ProcessStack;
let fake: FakeModelServer;
let agent: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack({ AGENTRY_LLM_MAX_ATTEMPTS: String(MAX_ATTEMPTS) });
  agent = await seedAgent(stack.admin, fake, { model: MODEL });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

afterEach(() => fake.requests.splice(0));

describe('reliability: model server faults', () => {
  it('LLM-3/EX-7: a burst of 429, 500, 500 before any text: retried by Temporal, the client gets 200 and the full answer once (no reset); 4 model calls', async () => {
    fake.script(MODEL, {
      text: ANSWER,
      deltaDelayMs: 20,
      sequence: [{ fail: 429, message: 'slow down' }, { fail: 500 }, { fail: 500 }],
    });
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await stream.ended;
    expectCleanAnswer(stream.events, ANSWER, 4);
    expect(resets(stream.events)).toHaveLength(0);
    expect(fake.requestsFor(MODEL)).toHaveLength(4);
    expect(await finishedRecord(stack.database.url, stream.executionId)).toEqual({
      status: 'succeeded',
      attempts: 4,
    });
    expect(await activityRuns(TEMPORAL_ADDRESS, `execution-${stream.executionId}`, 'callModel')).toEqual([
      { attempt: 4, previousFailure: 'Llm.ServerError' },
    ]);
  }, 60_000);

  it('LLM-3/§9.5: the model answers, drops mid-stream, then 429, 500, 429 until the retry budget is spent: 200, attempt 1 text, one in-band error 502 naming the upstream 429; calls == maximumAttempts', async () => {
    fake.script(MODEL, {
      text: ANSWER,
      deltaDelayMs: 20,
      sequence: [{ dropAfterDeltas: 3 }, { fail: 429 }, { fail: 500 }, { fail: 429, message: 'quota gone' }],
    });
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await stream.ended;
    const { events } = stream;
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.slice(0, -1).map((e) => [e.type, e.attempt])).toEqual([
      ['delta', 1],
      ['delta', 1],
      ['delta', 1],
    ]);
    expect(events[events.length - 1]).toEqual({
      type: 'error',
      seq: 4,
      status: 502,
      detail: 'Model server failed: 429 quota gone',
    });
    expect(fake.requestsFor(MODEL)).toHaveLength(MAX_ATTEMPTS);
    expect(await finishedRecord(stack.database.url, stream.executionId)).toMatchObject({
      status: 'failed',
      attempts: MAX_ATTEMPTS,
    });
  }, 60_000);

  it('LLM-3/§9.5: the model stalls after 3 deltas: the no-progress timer fails the attempt as Llm.Stalled, the retry streams the full answer; reset, full answer once; 2 model calls', async () => {
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 20, sequence: [{ stallAfterDeltas: 3 }] });
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await stream.ended;
    expectCleanAnswer(stream.events, ANSWER, 2);
    expect(resets(stream.events)).toHaveLength(1);
    expect(stream.events.filter((e) => e.type === 'delta' && e.attempt === 1)).toHaveLength(3);
    // The stalled request was abandoned (aborted), not left open.
    expect(fake.requestsFor(MODEL).map((r) => r.aborted)).toEqual([true, false]);
    expect(await activityRuns(TEMPORAL_ADDRESS, `execution-${stream.executionId}`, 'callModel')).toEqual([
      { attempt: 2, previousFailure: 'Llm.Stalled' },
    ]);
  }, 60_000);
});
