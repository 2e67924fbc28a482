// DX-4 (issue 33): an Idempotency-Key claim taken over while its start is slow but alive. The
// lease is judged by Redis's own expiry, so a repeat whose clock runs ahead (another replica) does
// not take a live start's claim; when a lease did lapse (its renewals did not land), the repeat and
// the stalled start start the same ids, and whichever finds the workflow already started attaches
// to it: both clients read the one answer, and nothing marks that execution failed.
import type { WorkflowClient } from '@temporalio/client';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { seedAgent, type SeededAgent } from '../helpers/agent-streams';
import { answerOf, parseNdjson, type TestResponse } from '../helpers/http';
import { startStack, type Stack } from '../helpers/stack';
import { sleep, waitFor } from '../helpers/wait';

const MODEL = 'takeover';

let stack: Stack;
let fake: FakeModelServer;
let agent: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  agent = await seedAgent(stack.api, fake, { model: MODEL });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

/** Lets a stalled start go when its test failed before releasing it. */
let releaseStall = (): void => undefined;

beforeEach(() => fake.reset());
afterEach(() => {
  releaseStall();
  jest.restoreAllMocks();
});

const execute = (key: string): Promise<TestResponse> =>
  stack.api.post(
    `/agents/${agent.agentId}/execute`,
    { prompt: { question: 'Who answers?' }, classification: 'internal' },
    { 'x-pipeline-id': agent.pipelineId, 'x-llm-id': agent.llmId, 'idempotency-key': key },
  );

/**
 * Holds the next workflow start (the first request's, after its record was written) until
 * `release`, as a slow Temporal would; then it goes through, or fails with `failure`.
 */
function stallNextStart(failure?: Error) {
  const workflow: WorkflowClient = stack.temporal.workflow;
  const start = workflow.start.bind(workflow);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = releaseStall = resolve));
  let reached!: () => void;
  const reachedStart = new Promise<void>((resolve) => (reached = resolve));
  jest.spyOn(workflow, 'start').mockImplementationOnce((async (...args: Parameters<typeof start>) => {
    reached();
    await released;
    if (failure) throw failure;
    return start(...args);
  }) as typeof start);
  return { reached: reachedStart, release };
}

/** This process's clock `ms` ahead, as another replica's may be. */
const skewClock = (ms: number) => {
  const now = Date.now.bind(Date);
  return jest.spyOn(Date, 'now').mockImplementation(() => now() + ms);
};

/** The claim's lease lapses, as Redis expires it when its start's renewals did not land. */
async function lapseLease(): Promise<void> {
  const redis = stack.rt.redis!;
  const leases = await redis.keys(`${stack.env.config.redisPrefix}idempotency:*:lease`);
  expect(leases).toHaveLength(1);
  await redis.del(leases);
}

const takenOver = () => stack.logs.some((line) => line.includes('idempotency claim taken over'));

const recordOf = async (executionId: string) =>
  stack.rt.db('executions').where({ id: executionId }).first('status', 'error_type');

const executionIdOf = (res: TestResponse) => res.headers.get('x-agentry-execution-id');

/** Both requests answered 200 with the one execution's whole answer, asked of the model once. */
async function expectOneExecution(first: TestResponse, repeat: TestResponse, answer: string) {
  expect([first.status, repeat.status]).toEqual([200, 200]);
  expect(executionIdOf(repeat)).toBe(executionIdOf(first));
  expect(answerOf(parseNdjson(first.text))).toBe(answer);
  expect(answerOf(parseNdjson(repeat.text))).toBe(answer);
  expect(fake.requestsFor(MODEL)).toHaveLength(1);
  await waitFor(async () => (await recordOf(executionIdOf(first)!))?.status !== 'running');
  expect(await recordOf(executionIdOf(first)!)).toEqual({ status: 'succeeded', error_type: null });
}

describe('DX-4 Idempotency-Key: a start that is slow but alive (issue 33)', () => {
  it('DX-4: a repeat on a replica whose clock runs 10 s ahead does not take the claim of a start that is still alive: both clients get the one answer, nothing is marked failed', async () => {
    fake.script(MODEL, { text: 'one answer for both', deltaDelayMs: 10 });
    const stall = stallNextStart();
    const first = execute('skewed-replica');
    await stall.reached;
    const clock = skewClock(10_000);
    const repeat = execute('skewed-replica');
    // The repeat looks at the claim every 50 ms meanwhile; the start's lease is 6 s, renewed.
    await sleep(500);
    clock.mockRestore();
    stall.release();
    await expectOneExecution(await first, await repeat, 'one answer for both');
    expect(takenOver()).toBe(false);
  });

  it('DX-4: a start whose lease lapsed while it stalled loses the claim to a repeat, which starts the same ids; the stalled start then finds the workflow started and attaches to it', async () => {
    fake.script(MODEL, { text: 'started by the repeat', deltaDelayMs: 10 });
    const stall = stallNextStart();
    const first = execute('lapsed-alive');
    await stall.reached;
    await lapseLease();
    const repeat = execute('lapsed-alive');
    await waitFor(takenOver, { what: 'the repeat to take the lapsed claim over' });
    // The repeat's workflow runs (and may finish) before the stalled start reaches Temporal.
    await waitFor(() => fake.requestsFor(MODEL).length === 1, { what: 'the model call' });
    stall.release();
    await expectOneExecution(await first, await repeat, 'started by the repeat');
  });

  it('DX-4: a start that lost its claim and then failed to reach Temporal leaves the execution the repeat started alone', async () => {
    fake.script(MODEL, { text: 'kept by the repeat', deltaDelayMs: 10 });
    const stall = stallNextStart(
      Object.assign(new Error('14 UNAVAILABLE: connection dropped'), { code: 14 }),
    );
    const first = execute('lost-then-failed');
    await stall.reached;
    await lapseLease();
    const repeat = execute('lost-then-failed');
    await waitFor(takenOver, { what: 'the repeat to take the lapsed claim over' });
    const answered = await repeat;
    expect(answered.status).toBe(200);
    stall.release();
    // The stalled start failed: its client is told to retry, and a retry attaches.
    expect((await first).status).toBe(503);
    const retry = await execute('lost-then-failed');
    await expectOneExecution(answered, retry, 'kept by the repeat');
  });
});
