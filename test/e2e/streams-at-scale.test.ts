// Streams at scale (issue 25) through the real API and worker processes: 300 concurrent paced
// streams on one worker whose model-stream limit is set to 200, so that the limit is both reached
// and honoured; every answer exact and once; ingestion keeps its own slots while every model slot
// is busy; and DX-3's cancellation reaches the model while the streams run.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { documentSettled } from '../helpers/knowledge';
import { waitFor } from '../helpers/wait';
import {
  executeAgent,
  expectCleanAnswer,
  resets,
  scriptedAnswer,
  seedAgent,
  type LiveStream,
  type SeededAgent,
} from '../helpers/agent-streams';

const MODEL = 'scale-gpt';
const STREAMS = 300;
const MODEL_STREAM_SLOTS = 200;
/** How long 300 executions may take to start when they arrive at once (quiet machine: ≈ 10 s). */
const START_ALL_MS = 150_000;
/** A generous bound on DX-3's 2 s from the cancel to the aborted model request, under this load. */
const CANCEL_BOUND_MS = 10_000;

let stack: ProcessStack;
let fake: FakeModelServer;
let agent: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack({
    AGENTRY_WORKER_MODEL_STREAMS: String(MODEL_STREAM_SLOTS),
    // Streams are held at their end while the test ingests: neither a stalled model nor one that
    // ran out of time.
    AGENTRY_LLM_NO_PROGRESS_MS: '120000',
    AGENTRY_LLM_START_TO_CLOSE_MS: '300000',
    // The product's heartbeat timeout (the tests' 5 s is tight for 300 streams on 2 shared cores).
    AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS: '20000',
  });
  agent = await seedAgent(stack.admin, fake, { model: MODEL });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

afterEach(() => fake.reset());

/** Each client's question carries its number, so that the fake's log tells their requests apart. */
const question = (i: number): string => `Question ${i}: how do I rotate the credentials?`;
const requestOf = (i: number) =>
  fake.requests.find((r) => JSON.stringify(r.body.input).includes(`Question ${i}:`));

/** Scripts paced answers of 10 deltas that hold their end until `release` is called. */
function holdStreamEnds(): { answer: string; release: () => void } {
  const answer = scriptedAnswer(10);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  fake.script(MODEL, { text: answer, deltaDelayMs: 50, beforeEnd: () => held });
  return { answer, release };
}

/** Starts `STREAMS` executions at once; each resolves when its status is decided. */
const startAll = (): Promise<LiveStream & { body: string }>[] =>
  Array.from({ length: STREAMS }, (_, i) => executeAgent(stack.admin, agent, {}, question(i)));

describe('streams at scale', () => {
  it('300 concurrent paced streams on one worker: at most AGENTRY_WORKER_MODEL_STREAMS at once, each answer exact and once; a document is ingested while every model slot is busy', async () => {
    // Every stream holds its end until the test lets go: the first 200 keep their slots busy.
    const { answer, release } = holdStreamEnds();
    const pending = startAll();
    // 300 executions start at once: on a loaded machine their first steps take a while.
    await waitFor(() => fake.open === MODEL_STREAM_SLOTS, {
      what: 'every model slot busy',
      timeoutMs: START_ALL_MS,
    });

    // Ingestion runs on its own queue and slots: it completes while the model streams hold theirs.
    const doc = await stack.admin.post(`/pipelines/${agent.pipelineId}/documents`, {
      content: 'Keys rotate every 90 days.',
      classification: 'internal',
    });
    expect(doc.status).toBe(202);
    expect(await documentSettled(stack.admin, agent.pipelineId, doc.body.id)).toMatchObject({
      status: 'ready',
    });
    expect(fake.open).toBe(MODEL_STREAM_SLOTS);
    expect(fake.requests).toHaveLength(MODEL_STREAM_SLOTS);

    release();
    const streams = await Promise.all(pending);
    await Promise.all(streams.map((s) => s.ended));
    for (const stream of streams) {
      expect(stream.status).toBe(200);
      expectCleanAnswer(stream.events, answer, 1);
      expect(resets(stream.events)).toHaveLength(0);
    }
    expect(fake.requests).toHaveLength(STREAMS);
    expect(fake.mostOpen).toBe(MODEL_STREAM_SLOTS);
  }, 300_000);

  it('DX-3 while 300 streams run: cancelled executions end with error 499 and their model requests are aborted; the others finish exact', async () => {
    // Streams hold their end until the cancellations are checked: each is cancelled mid-stream.
    const { answer, release } = holdStreamEnds();
    const pending = startAll();
    // The first ten to start streaming are cancelled at once.
    const firstStarted: number[] = [];
    pending.forEach((p, i) => void p.then((s) => s.status === 200 && firstStarted.push(i)));
    await waitFor(() => firstStarted.length >= 10, { what: 'ten streams started', timeoutMs: START_ALL_MS });
    const cancelled = firstStarted.slice(0, 10);
    const streamsOf = await Promise.all(cancelled.map((i) => pending[i]!));
    const cancelledAt = Date.now();
    const answers = await Promise.all(
      streamsOf.map((s) => stack.admin.delete(`/executions/${s.executionId}`)),
    );
    expect(answers.map((a) => [a.status, a.body.detail])).toEqual(cancelled.map(() => [202, undefined]));
    await waitFor(() => cancelled.every((i) => requestOf(i)?.aborted), {
      what: 'the cancelled model requests to be aborted',
      timeoutMs: CANCEL_BOUND_MS,
    });
    const abortMs = Math.max(...cancelled.map((i) => requestOf(i)!.closedAt! - cancelledAt));
    expect(abortMs).toBeLessThan(CANCEL_BOUND_MS);

    release();
    const streams = await Promise.all(pending);
    await Promise.all(streams.map((s) => s.ended));
    streams.forEach((stream, i) => {
      expect(stream.status).toBe(200);
      if (cancelled.includes(i)) {
        expect(stream.events.at(-1)).toMatchObject({ type: 'error', status: 499 });
        expect(stream.events.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
      } else expectCleanAnswer(stream.events, answer, 1);
    });
    expect(fake.requests).toHaveLength(STREAMS);
  }, 300_000);
});
