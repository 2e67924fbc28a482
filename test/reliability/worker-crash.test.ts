// Worker processes killed (SIGKILL) while they stream an agent's answer to a client that stays
// connected to the API process (LLM-3, §9.5, §9.6). The heartbeat timeout detects the dead
// worker and the next attempt runs on a live one: a restarted worker, or a second worker that was
// running all along. The client sees the first attempt's text, one `reset`, then the complete
// answer exactly once and one `done`; the model was asked exactly twice.
import { createClient } from 'redis';
import { Client as PgClient } from 'pg';
import { answerPayloadId } from '../../services/answers';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { until, waitFor } from '../helpers/wait';
import {
  deltaCount,
  executeAgent,
  expectCleanAnswer,
  readNdjson,
  resets,
  scriptedAnswer,
  seedAgent,
  type SeededAgent,
} from '../helpers/agent-streams';
import {
  activityRuns,
  expectRecoveredFromWorkerDeath,
  finishedRecord,
  senderOfModelRequest,
} from './support';
import { answerOf } from '../helpers/http';
import { TEMPORAL_ADDRESS } from '../helpers/services';

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

/** Resolves when the answer's payload row is written (the attempt stored the answer). */
async function answerStored(databaseUrl: string, executionId: string): Promise<void> {
  const db = new PgClient({ connectionString: databaseUrl });
  await db.connect();
  try {
    await until(
      async () =>
        (await db.query('SELECT 1 FROM execution_payloads WHERE id = $1', [answerPayloadId(executionId)]))
          .rowCount || undefined,
      { what: 'the stored answer', timeoutMs: 20_000, intervalMs: 20 },
    );
  } finally {
    await db.end();
  }
}

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

  it('§9.5/DX-2: the worker dies after the whole answer was relayed and stored, before the attempt completed: the retry takes the stored answer and ends the stream with no reset; live and re-attaching readers have the exact answer once; 1 model call', async () => {
    for (const w of stack.workers.slice(1)) await w.kill('SIGKILL');
    if (stack.workers.every((w) => w.process.exitCode !== null || w.process.signalCode !== null))
      await stack.startWorker();
    const worker = stack.workers.find((w) => w.process.exitCode === null && w.process.signalCode === null)!;
    // The stream's end is held until the test has paused Redis's writes: the attempt then stores
    // the answer (PostgreSQL) and blocks publishing `done`; it dies in that window.
    let releaseEnd!: () => void;
    const ended = new Promise<void>((resolve) => (releaseEnd = resolve));
    let atEnd!: () => void;
    const reachedEnd = new Promise<void>((resolve) => (atEnd = resolve));
    fake.script(MODEL, {
      text: ANSWER,
      deltaDelayMs: 20,
      beforeEnd: () => {
        atEnd();
        return ended;
      },
    });
    const redis = createClient({ url: stack.env.env.REDIS_URL });
    await redis.connect();
    try {
      const stream = await executeAgent(stack.admin, agent);
      expect(stream.status).toBe(200);
      await reachedEnd;
      // Deltas are batched in time: the text, not the number of events, says all is relayed.
      await waitFor(() => answerOf(stream.events) === ANSWER, {
        what: 'every delta relayed',
        timeoutMs: 20_000,
      });
      await redis.sendCommand(['CLIENT', 'PAUSE', '30000', 'WRITE']);
      releaseEnd();
      await answerStored(stack.database.url, stream.executionId);
      await worker.kill('SIGKILL');
      await redis.sendCommand(['CLIENT', 'UNPAUSE']);
      await stack.startWorker();
      await stream.ended;

      // Before the fix: the whole answer, then `reset` and `done` of attempt 2: an empty text.
      expect(answerOf(stream.events)).toBe(ANSWER);
      expectCleanAnswer(stream.events, ANSWER, 1);
      expect(resets(stream.events)).toHaveLength(0);
      expect(fake.requestsFor(MODEL)).toHaveLength(1);
      expect(await activityRuns(TEMPORAL_ADDRESS, `execution-${stream.executionId}`, 'callModel')).toEqual([
        { attempt: 2, previousFailure: 'timeout:TIMEOUT_TYPE_HEARTBEAT' },
      ]);
      expect(await finishedRecord(stack.database.url, stream.executionId)).toMatchObject({
        status: 'succeeded',
      });
      // Re-attaching readers see the same events: from the start, and after the 10th.
      const reattach = async (after: number) => {
        const res = await fetch(
          `${stack.admin.baseUrl}/executions/${stream.executionId}/stream?after=${after}`,
          { headers: stack.admin.headers({ accept: 'application/x-ndjson' }) },
        );
        expect(res.status).toBe(200);
        const read = readNdjson(res);
        await read.ended;
        return read.events;
      };
      expect(await reattach(0)).toEqual(stream.events);
      expect(await reattach(10)).toEqual(stream.events.slice(10));
    } finally {
      await redis.sendCommand(['CLIENT', 'UNPAUSE']).catch(() => undefined);
      await redis.quit();
    }
  }, 90_000);
});
