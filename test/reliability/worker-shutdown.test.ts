// Issue 36: a worker's graceful stop, as a Kubernetes rollout or scale-down sends it (SIGTERM,
// then SIGKILL after the pod's grace). The worker stops polling at once (/readyz 503, /livez still
// 200), lets its model streams finish within AGENTRY_WORKER_SHUTDOWN_GRACE_MS, then hands the rest
// over: their attempts fail at once, so Temporal retries them on another worker without waiting
// for a heartbeat timeout (20 s here), and a resumable LLM's stream goes on there without a second
// call. In every case the process exits within the grace and every client gets the exact answer.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import {
  deltaCount,
  executeAgent,
  expectCleanAnswer,
  expectContinuousAnswer,
  resets,
  scriptedAnswer,
  seedAgent,
  type LiveStream,
  type SeededAgent,
} from '../helpers/agent-streams';
import { startProcessStack, startWorkerProcess, type Child, type ProcessStack } from '../helpers/processes';
import { waitFor } from '../helpers/wait';

const HEARTBEAT_TIMEOUT_MS = 20_000;
const SHORT = scriptedAnswer(30); // 3 s at 100 ms a delta
// Long enough that none ends within the 1.5 s grace, however slowly the test reaches SIGTERM.
const LONG = scriptedAnswer(150); // 15 s

let stack: ProcessStack;
let fake: FakeModelServer;
let plain: SeededAgent;
let resumable: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack({
    AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS),
    AGENTRY_WORKER_SHUTDOWN_GRACE_MS: '8000',
  });
  plain = await seedAgent(stack.admin, fake, { model: 'drain-gpt' });
  resumable = await seedAgent(stack.admin, fake, { model: 'drain-resumable', resumable: true });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

afterEach(() => fake.reset());

const probe = async (worker: Child, path: string): Promise<number> =>
  (await fetch(`http://127.0.0.1:${worker.metricsPort}${path}`)).status;

/** Streams started while only `worker` runs, each past its first deltas. */
async function streamsOn(agent: SeededAgent, count: number): Promise<LiveStream[]> {
  const streams = await Promise.all(Array.from({ length: count }, () => executeAgent(stack.admin, agent)));
  for (const s of streams) expect(s.status).toBe(200);
  await waitFor(() => streams.every((s) => deltaCount(s.events) >= 3), {
    what: 'the first deltas',
    timeoutMs: 20_000,
  });
  return streams;
}

/** SIGTERM; resolves with how long the process took to exit, and the probes while it drained. */
async function terminate(worker: Child): Promise<{ exitedAfterMs: number; ready: number; live: number }> {
  expect(await probe(worker, '/readyz')).toBe(200);
  const exited = new Promise<void>((resolve) => worker.process.once('exit', () => resolve()));
  const sentAt = Date.now();
  worker.process.kill('SIGTERM');
  await waitFor(async () => (await probe(worker, '/readyz')) === 503, {
    what: '/readyz to say 503',
    timeoutMs: 2000,
  });
  const live = await probe(worker, '/livez');
  await exited;
  return { exitedAfterMs: Date.now() - sentAt, ready: 503, live };
}

describe('reliability: a worker stopped with SIGTERM while it streams', () => {
  it('issue 36: streams shorter than the grace finish on the stopping worker: one attempt each, no reset, exit within the grace', async () => {
    fake.script('drain-gpt', { text: SHORT, deltaDelayMs: 100 });
    const worker = stack.worker;
    const streams = await streamsOn(plain, 4);
    const stop = await terminate(worker);
    await Promise.all(streams.map((s) => s.ended));

    expect(stop.live).toBe(200);
    expect(stop.exitedAfterMs).toBeLessThan(8000);
    for (const s of streams) expectCleanAnswer(s.events, SHORT, 1);
    expect(fake.requestsFor('drain-gpt')).toHaveLength(4);
  }, 60_000);

  it('issue 36: streams longer than the grace are handed over when it ends: a new attempt elsewhere long before the heartbeat timeout, the exact answer', async () => {
    fake.script('drain-gpt', { text: LONG, deltaDelayMs: 100 });
    const draining = await startWorkerProcess({ ...stack.env.env, AGENTRY_WORKER_SHUTDOWN_GRACE_MS: '1500' });
    stack.workers.push(draining);
    const streams = await streamsOn(plain, 3);
    await stack.startWorker(); // where the streams go
    const stop = await terminate(draining);
    await Promise.all(streams.map((s) => s.ended));

    expect(stop.exitedAfterMs).toBeLessThan(1500 + 4000);
    for (const s of streams) {
      expectCleanAnswer(s.events, LONG, 2);
      expect(resets(s.events)).toHaveLength(1);
      const handedOverAt = s.arrivals[s.events.findIndex((e) => e.type === 'reset')]!;
      const cutAt = s.arrivals[s.events.map((e) => e.attempt).lastIndexOf(1)]!;
      expect(handedOverAt - cutAt).toBeLessThan(HEARTBEAT_TIMEOUT_MS / 2);
    }
    expect(fake.requestsFor('drain-gpt')).toHaveLength(6);
  }, 90_000);

  it("issue 36/27: a resumable LLM's streams handed over go on where they were: no reset, no second call", async () => {
    fake.script('drain-resumable', { text: LONG, deltaDelayMs: 100 });
    const live = stack.workers.filter((w) => w.process.exitCode === null && w.process.signalCode === null);
    const draining = await startWorkerProcess({ ...stack.env.env, AGENTRY_WORKER_SHUTDOWN_GRACE_MS: '1500' });
    stack.workers.push(draining);
    // Only the draining worker polls while the streams start.
    await Promise.all(live.map((w) => w.kill('SIGTERM')));
    const streams = await streamsOn(resumable, 3);
    await stack.startWorker();
    const stop = await terminate(draining);
    await Promise.all(streams.map((s) => s.ended));

    expect(stop.exitedAfterMs).toBeLessThan(1500 + 4000);
    for (const s of streams) {
      expectContinuousAnswer(s.events, LONG, 2);
      expect(s.events.some((e) => e.type === 'delta' && e.attempt === 1)).toBe(true);
    }
    expect(fake.backgroundCounts('drain-resumable')).toMatchObject({ creates: 3, resumes: 3, cancels: 0 });
  }, 90_000);
});
