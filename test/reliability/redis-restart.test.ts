// Redis restarted under a running execution (§9.6). The stack runs on a private redis-server
// that persists every write (AOF, fsync always); it is killed (SIGKILL) while the answer streams
// and started again on the same port and directory, 4 s later: longer than the no-progress
// time (3 s), which must not count the wait for Redis as a silent model.
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
import { finishedRecord, PrivateRedis } from './support';

const MODEL = 'redis-gpt';
// 120 deltas at 100 ms: the answer still streams well after the outage ends, even on a slow machine.
const ANSWER = scriptedAnswer(120);

let redis: PrivateRedis;
let stack: ProcessStack;
let fake: FakeModelServer;
let agent: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  redis = await PrivateRedis.start();
  stack = await startProcessStack({ REDIS_URL: redis.url });
  agent = await seedAgent(stack.admin, fake, { model: MODEL });
});

afterAll(async () => {
  await stack?.stop();
  await redis?.stop();
  await fake?.close();
});

describe('reliability: Redis restarted mid-execution', () => {
  it('§9.6/LLM-3: Redis killed mid-stream and back 4 s later (AOF): the relay outlasts the outage, the no-progress timer does not fire; the connected client gets the full answer once, no reset, no error; 1 model call', async () => {
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100 });
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 5, { what: 'the first deltas', timeoutMs: 20_000 });
    await redis.restart(4000);
    // Redis came back while the answer was still streaming.
    expect(stream.events.some((e) => e.type === 'done' || e.type === 'error')).toBe(false);
    await stream.ended;
    expectCleanAnswer(stream.events, ANSWER, 1);
    expect(resets(stream.events)).toHaveLength(0);
    expect(fake.requestsFor(MODEL).map((r) => r.aborted)).toEqual([false]);
    expect(await finishedRecord(stack.database.url, stream.executionId)).toEqual({
      status: 'succeeded',
      attempts: 1,
    });
  }, 90_000);
});
