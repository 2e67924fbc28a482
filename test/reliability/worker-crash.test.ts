// Worker processes killed (SIGKILL) while they stream an agent's answer to a client that stays
// connected to the API process (LLM-3, §9.5, §9.6). The heartbeat timeout detects the dead
// worker and the next attempt runs on a live one: a restarted worker, or a second worker that was
// running all along. The client sees the first attempt's text, one `reset`, then the complete
// answer exactly once and one `done`; the model was asked exactly twice.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { waitFor } from '../helpers/wait';
import {
  deltaCount,
  executeAgent,
  scriptedAnswer,
  seedAgent,
  type SeededAgent,
} from '../helpers/agent-streams';
import { expectRecoveredFromWorkerDeath, senderOfModelRequest } from './support';

const MODEL = 'crash-gpt';
/** 40 words, one per delta, 100 ms apart: about 4 s per attempt. */
const ANSWER = scriptedAnswer(40);

let stack: ProcessStack;
let fake: FakeModelServer;
let agent: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100 });
  stack = await startProcessStack({ AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS: '3000' });
  agent = await seedAgent(stack.admin, fake, { model: MODEL });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100 }));
afterEach(() => fake.requests.splice(0));

const recoveryOf = (stream: { events: any[]; executionId: string }) => ({
  events: stream.events,
  executionId: stream.executionId,
  answer: ANSWER,
  fake,
  model: MODEL,
  databaseUrl: stack.database.url,
});

describe('reliability: a worker killed mid-stream', () => {
  it('LLM-3/§9.5/§9.6: the only worker is SIGKILLed mid-stream; after the heartbeat timeout a restarted worker runs attempt 2; the client sees reset, then the full answer once; 2 model calls', async () => {
    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 3, { what: 'the first deltas', timeoutMs: 20_000 });
    await stack.workers[0]!.kill('SIGKILL');
    const beforeKill = stream.events.length;
    expect(stream.events.every((e) => e.type === 'delta' && e.attempt === 1)).toBe(true);

    await stack.startWorker();
    await stream.ended;
    await expectRecoveredFromWorkerDeath({ ...recoveryOf(stream), beforeKill });
  }, 90_000);

  it('LLM-3/§9.5: two workers, the one streaming is SIGKILLed; the other, running all along, completes the answer (no restart); reset, full answer once; 2 model calls', async () => {
    const live = stack.workers.filter((w) => w.process.exitCode === null && w.process.signalCode === null);
    if (live.length < 2) await stack.startWorker();
    const workers = stack.workers.filter((w) => w.process.exitCode === null && w.process.signalCode === null);
    expect(workers).toHaveLength(2);
    const workerCount = stack.workers.length;

    const stream = await executeAgent(stack.admin, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 3, { what: 'the first deltas', timeoutMs: 20_000 });
    // Whichever worker got the activity holds the connection to the model server.
    const streamingPid = await senderOfModelRequest(fake, MODEL, 0);
    const streaming = workers.find((w) => w.process.pid === streamingPid);
    expect(streaming).toBeDefined();
    const survivor = workers.find((w) => w !== streaming)!;
    const beforeKill = stream.events.length;
    await streaming!.kill('SIGKILL');

    // Attempt 2 reaches the model from the surviving worker.
    const retryPid = await senderOfModelRequest(fake, MODEL, 1);
    expect(retryPid).toBe(survivor.process.pid);
    await stream.ended;
    expect(stack.workers).toHaveLength(workerCount);
    await expectRecoveredFromWorkerDeath({ ...recoveryOf(stream), beforeKill });
  }, 90_000);
});
