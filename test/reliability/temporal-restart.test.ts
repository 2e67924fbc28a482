// The Temporal server restarted under a running execution (§9.3, §9.6). The stack runs on a
// private dev server (its own port, persisting to a SQLite file; never the shared one): it is
// killed (SIGKILL) while the answer streams and started again on the same port and file. The
// worker and the API reconnect; the execution carries on from its history and completes. An
// outage longer than the heartbeat timeout makes Temporal retry the model attempt; the retry
// waits for the live stream instead of asking the model again (activities/model-stream-claim.ts).
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { waitFor } from '../helpers/wait';
import {
  deltaCount,
  executeAgent,
  expectCleanAnswer,
  resets,
  scriptedAnswer,
  seedAgent,
  type SeededAgent,
} from '../helpers/agent-streams';
import { activityRuns, finishedRecord, PrivateTemporal } from './support';

const MODEL = 'temporal-gpt';
// 120 deltas at 100 ms: the answer still streams well after the outage ends, even on a slow machine.
const ANSWER = scriptedAnswer(120);
const HEARTBEAT_TIMEOUT_MS = 20_000;

let temporal: PrivateTemporal;
let stack: ProcessStack;
let fake: FakeModelServer;
let agent: SeededAgent;
/** The same agent on a resumable LLM (issue 27). */
let resumable: SeededAgent;
const RESUMABLE_MODEL = 'temporal-resumable-gpt';

beforeAll(async () => {
  fake = await startFakeModelServer();
  temporal = await PrivateTemporal.start();
  // A heartbeat timeout longer than the restart: the outage must not read as a dead worker. The
  // start-to-close timeout is the product's (the tests' 30 s is shorter than the longer answer).
  stack = await startProcessStack({
    TEMPORAL_ADDRESS: temporal.address,
    AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS),
    AGENTRY_LLM_START_TO_CLOSE_MS: '600000',
  });
  agent = await seedAgent(stack.admin, fake, { model: MODEL });
  resumable = await seedAgent(stack.admin, fake, { model: RESUMABLE_MODEL, resumable: true });
});

afterAll(async () => {
  await stack?.stop();
  await temporal?.stop();
  await fake?.close();
});

/**
 * An answer of 150 deltas 250 ms apart (≈ 38 s) through Temporal down 25 s, longer than the
 * heartbeat timeout: the stream outlives the outage, and ends with the full answer once, no reset.
 */
async function streamThroughLongOutage(model: string, target: SeededAgent) {
  const answer = scriptedAnswer(150);
  fake.script(model, { text: answer, deltaDelayMs: 250 });
  const stream = await executeAgent(stack.admin, target);
  expect(stream.status).toBe(200);
  await waitFor(() => deltaCount(stream.events) >= 3, { what: 'the first deltas', timeoutMs: 20_000 });
  await temporal.restart(HEARTBEAT_TIMEOUT_MS + 5000);
  expect(stream.events.some((e) => e.type === 'done' || e.type === 'error')).toBe(false);
  await stream.ended;
  expectCleanAnswer(stream.events, answer, 1);
  expect(resets(stream.events)).toHaveLength(0);
  return stream;
}

describe('reliability: Temporal restarted mid-execution', () => {
  it('§9.3/§9.6: the Temporal dev server is killed mid-stream and restarted on its database: the execution continues; the client gets the full answer once, no reset; 1 model call; the record says succeeded', async () => {
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100 });
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 5, { what: 'the first deltas', timeoutMs: 20_000 });
    await temporal.restart();
    // Temporal came back while the answer was still streaming.
    expect(stream.events.some((e) => e.type === 'done' || e.type === 'error')).toBe(false);
    await stream.ended;
    expectCleanAnswer(stream.events, ANSWER, 1);
    expect(resets(stream.events)).toHaveLength(0);
    expect(fake.requestsFor(MODEL).map((r) => r.aborted)).toEqual([false]);
    // The workflow went on after the restart: its model activity completed in the recovered
    // history and the closing bookkeeping ran.
    expect(await activityRuns(temporal.address, `execution-${stream.executionId}`, 'callModel')).toEqual([
      { attempt: 1, previousFailure: undefined },
    ]);
    expect(await finishedRecord(stack.database.url, stream.executionId, 60_000)).toEqual({
      status: 'succeeded',
      attempts: 1,
    });
  }, 120_000);

  it('LLM-3/§9.6: Temporal down longer than the heartbeat timeout while the answer streams: the attempt is retried, and the retry waits for the live stream instead of asking again: 1 model call, the full answer once, no reset', async () => {
    // 150 deltas at 250 ms (≈ 38 s): the stream outlives an outage of 25 s.
    fake.requests.splice(0);
    const stream = await streamThroughLongOutage(MODEL, agent);
    expect(fake.requestsFor(MODEL).map((r) => r.aborted)).toEqual([false]);
    // Temporal timed attempt 1 out on its heartbeat when it came back; attempt 2 took the answer
    // attempt 1 went on streaming and stored.
    expect(await activityRuns(temporal.address, `execution-${stream.executionId}`, 'callModel')).toEqual([
      { attempt: 2, previousFailure: 'timeout:TIMEOUT_TYPE_HEARTBEAT' },
    ]);
    expect(await finishedRecord(stack.database.url, stream.executionId, 60_000)).toEqual({
      status: 'succeeded',
      attempts: 1,
    });
  }, 150_000);

  it('issue 27: with a resumable LLM, Temporal down longer than the heartbeat timeout: the retry neither creates a second response nor resumes the live one; the full answer once, no reset', async () => {
    const stream = await streamThroughLongOutage(RESUMABLE_MODEL, resumable);
    expect(fake.backgroundCounts(RESUMABLE_MODEL)).toMatchObject({ creates: 1, resumes: 0, cancels: 0 });
    // Usually Temporal times attempt 1 out when it comes back and attempt 2 waits for the live
    // stream; the checks above hold for it. The timeout is a race on the restarted server: a
    // heartbeat the worker sends as it reconnects can reach it before its timer task runs (1 run
    // of 2 in CI on 2026-12-02), and then attempt 1 simply completes. Either way: one attempt
    // completed, and a retry only after a heartbeat timeout.
    const runs = await activityRuns(temporal.address, `execution-${stream.executionId}`, 'callModel');
    expect([
      [{ attempt: 2, previousFailure: 'timeout:TIMEOUT_TYPE_HEARTBEAT' }],
      [{ attempt: 1, previousFailure: undefined }],
    ]).toContainEqual(runs);
  }, 150_000);
});
