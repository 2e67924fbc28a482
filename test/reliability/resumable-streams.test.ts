// A resumable LLM (issue 27) under the faults that cost a second model call without the mode: the
// worker SIGKILLed mid-stream, the connection to the model cut, the execution cancelled, and the
// provider forgetting the response. The fake model server speaks the Responses API's background
// mode and counts creates, resumes and cancels.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startProcessStack, type Child, type ProcessStack } from '../helpers/processes';
import { waitFor } from '../helpers/wait';
import { TEMPORAL_ADDRESS } from '../helpers/services';
import {
  deltaCount,
  executeAgent,
  expectCleanAnswer,
  expectContinuousAnswer,
  readNdjson,
  resets,
  scriptedAnswer,
  seedAgent,
  type SeededAgent,
} from '../helpers/agent-streams';
import { activityRuns, finishedRecord, metricSample } from './support';

const MODEL = 'resumable-gpt';
/** 40 words, one per delta, 100 ms apart: about 4 s of answer, cut in the middle. */
const ANSWER = scriptedAnswer(40);

let stack: ProcessStack;
let fake: FakeModelServer;
let agent: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack({ AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS: '3000' });
  agent = await seedAgent(stack.admin, fake, { model: MODEL, resumable: true });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

afterEach(() => fake.reset());

const liveWorker = (): Child =>
  stack.workers.find((w) => w.process.exitCode === null && w.process.signalCode === null)!;

/** The live worker's count of resumes with this outcome. */
async function resumes(outcome: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${liveWorker().metricsPort}/metrics`)).text();
  return metricSample(text, 'agentry_model_resumes_total', { outcome });
}

/** The stored answer, and a reader re-attaching from the start sees the same events. */
async function expectStored(executionId: string, events: any[]): Promise<void> {
  const record = await stack.admin.get(`/executions/${executionId}`);
  expect(record.body).toMatchObject({ status: 'succeeded', answer: ANSWER });
  const res = await fetch(`${stack.admin.baseUrl}/executions/${executionId}/stream`, {
    headers: stack.admin.headers({ accept: 'application/x-ndjson' }),
  });
  const again = readNdjson(res);
  await again.ended;
  expect(again.events).toEqual(events);
}

describe('reliability: a resumable LLM', () => {
  it('issue 27: the only worker is SIGKILLed mid-stream; attempt 2 resumes the background response after the last relayed event: 1 create, 1 resume, no reset, the exact answer once', async () => {
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100 });
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 5, { what: 'the first deltas', timeoutMs: 20_000 });
    await liveWorker().kill('SIGKILL');
    await stack.startWorker();
    await stream.ended;

    expectContinuousAnswer(stream.events, ANSWER, 2);
    expect(stream.events.some((e) => e.type === 'delta' && e.attempt === 1)).toBe(true);
    expect(fake.backgroundCounts(MODEL)).toMatchObject({ creates: 1, resumes: 1, cancels: 0 });
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
    expect(await activityRuns(TEMPORAL_ADDRESS, `execution-${stream.executionId}`, 'callModel')).toEqual([
      { attempt: 2, previousFailure: 'timeout:TIMEOUT_TYPE_HEARTBEAT' },
    ]);
    expect(await finishedRecord(stack.database.url, stream.executionId)).toEqual({
      status: 'succeeded',
      attempts: 2,
    });
    await expectStored(stream.executionId, stream.events);
    expect(await resumes('resumed')).toBe(1);
    expect(await resumes('restarted')).toBe(0);
  }, 90_000);

  it('issue 27: the connection to the model is cut mid-stream; the attempt resumes it without a retry: 1 create, 1 resume, attempt 1, no reset', async () => {
    fake.script(MODEL, {
      text: ANSWER,
      deltaDelayMs: 50,
      background: { dropConnection: { afterEvents: 15 } },
    });
    const reconnectedBefore = await resumes('reconnected');
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await stream.ended;

    expectContinuousAnswer(stream.events, ANSWER, 1);
    expect(fake.backgroundCounts(MODEL)).toMatchObject({ creates: 1, resumes: 1 });
    expect(await activityRuns(TEMPORAL_ADDRESS, `execution-${stream.executionId}`, 'callModel')).toEqual([
      { attempt: 1, previousFailure: undefined },
    ]);
    await expectStored(stream.executionId, stream.events);
    expect((await resumes('reconnected')) - reconnectedBefore).toBe(1);
  }, 60_000);

  it('issue 27/DX-3: cancelling the execution cancels the background response at the provider within 2 s', async () => {
    fake.script(MODEL, { text: scriptedAnswer(200), deltaDelayMs: 100 });
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 3, { what: 'the first deltas', timeoutMs: 20_000 });
    const sentAt = Date.now();
    expect((await stack.admin.delete(`/executions/${stream.executionId}`)).status).toBeLessThan(300);
    await waitFor(() => fake.backgroundCounts(MODEL).cancels >= 1, { what: 'the cancel', timeoutMs: 5000 });
    expect(fake.backgroundCounts(MODEL).cancelledAt[0]! - sentAt).toBeLessThan(2000);
    await stream.ended;
    expect(stream.events[stream.events.length - 1]).toMatchObject({ type: 'error', status: 499 });
    expect(fake.backgroundCounts(MODEL)).toMatchObject({ creates: 1, cancels: 1 });
  }, 60_000);

  it('issue 27: the provider forgot the response when the retry comes: it falls back to a new call (reset, 2 creates) and counts it', async () => {
    // Forgotten 1.5 s after its creation: after the kill, before the retry (3 s heartbeat timeout).
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100, background: { expireAfterMs: 1500 } });
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 5, { what: 'the first deltas', timeoutMs: 20_000 });
    const beforeKill = stream.events.length;
    await liveWorker().kill('SIGKILL');
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100 }); // the new response is kept
    await stack.startWorker();
    await stream.ended;

    expectCleanAnswer(stream.events, ANSWER, 2);
    expect(resets(stream.events)).toHaveLength(1);
    expect(stream.events.findIndex((e) => e.type === 'reset')).toBeGreaterThanOrEqual(beforeKill);
    expect(fake.backgroundCounts(MODEL)).toMatchObject({ creates: 2, resumes: 1 });
    expect(await resumes('restarted')).toBe(1);
    expect(await finishedRecord(stack.database.url, stream.executionId)).toMatchObject({
      status: 'succeeded',
    });
  }, 90_000);
});
