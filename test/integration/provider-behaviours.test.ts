// Issue 33, item 1: what OpenAI-compatible providers (OpenAI, vLLM, Ollama, LiteLLM, proxies) put
// on the wire, against the fake model speaking it, through an agent execution: every case ends
// with the exact text (or one clear in-band error with its status), the stored answer (or the
// failed record) matching it, and /readyz answering within 1 s while the stream runs and after.
// The probe runs on its own thread (test/helpers/readiness-probe.ts): an empty delta once left
// the model activity's process spinning, which a probe on the same loop could not have seen.
import { startFakeModelServer, type FakeBehaviour, type FakeModelServer } from '../fakes/fake-model-server';
import { deltaCount, resets, scriptedAnswer, seedAgent, type SeededAgent } from '../helpers/agent-streams';
import { rssGrowthWhile } from '../helpers/memory';
import { expectAnswer, expectError, ProviderRuns } from '../helpers/provider-runs';
import { ReadinessProbe } from '../helpers/readiness-probe';
import { startStack, type Stack } from '../helpers/stack';

const MODEL = 'provider-gpt';
const RESUMABLE = 'provider-resumable';
const ANSWER = scriptedAnswer(8);
/** AGENTRY_RELAY_BATCH_MS's default: deltas within it of the last published go out as one event. */
const BATCH_MS = 30;
/** Above the retry hints below, so they are honoured; the one beyond it is capped to it. */
const MAX_RETRY_INTERVAL_MS = 4000;

let fake: FakeModelServer;
let stack: Stack;
let agent: SeededAgent;
let resumable: SeededAgent;
let probe: ReadinessProbe;
let runs: ProviderRuns;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack({ env: { AGENTRY_LLM_RETRY_MAX_INTERVAL_MS: String(MAX_RETRY_INTERVAL_MS) } });
  agent = await seedAgent(stack.api, fake, { model: MODEL });
  resumable = await seedAgent(stack.api, fake, { model: RESUMABLE, resumable: true });
  probe = ReadinessProbe.start(stack.url, { intervalMs: 100 });
  runs = new ProviderRuns(stack, fake, probe);
  // A fresh stack's first execution loads and compiles its code paths (over a second of CPU on
  // 2 shared cores): the cases measure the providers' behaviour, not that cold start.
  await run({ text: ANSWER });
  fake.reset();
});

afterAll(async () => {
  await probe?.stop();
  await stack?.stop();
  await fake?.close();
});

afterEach(() => fake.reset());

/** Executes the agent on its scripted model; `sample` is called every 20 ms while it streams. */
const run = (behaviour: FakeBehaviour, sample?: () => void) => runs.run(agent, MODEL, behaviour, sample);

/** When each request for the model arrived, in ms after the first. */
const arrivals = (model = MODEL): number[] =>
  fake.requestsFor(model).map((r, _, all) => r.receivedAt - all[0]!.receivedAt);

describe('issue 33: empty deltas', () => {
  it('first, after pauses longer than the batching window, and last: the exact text, no empty event', async () => {
    const r = await run({ deltas: ['', 'Hello', '', ' world', '', '!', ''], deltaDelayMs: BATCH_MS * 4 });
    expectAnswer(r, 'Hello world!', 1);
    expect(r.events.filter((e) => e.type === 'delta' && e.text === '')).toHaveLength(0);
  });

  it('right after a delta, with no pause: the exact text', async () => {
    expectAnswer(await run({ deltas: ['Hello', '', '', ' world', ''] }), 'Hello world', 1);
  });
});

describe('issue 33: what an answer holds besides its text', () => {
  it('a reasoning item before the message: its summary is not part of the answer; its tokens are in output_tokens', async () => {
    const r = await run({ text: ANSWER, reasoning: { summary: ['Weighing', ' the sources'], tokens: 120 } });
    expectAnswer(r, ANSWER, 1);
    expect(JSON.stringify(r.events)).not.toContain('Weighing');
    expect(r.events[r.events.length - 1].usage.output_tokens).toBe(8 + 120);
  });

  it('several message items and content parts with annotation events: their texts in order', async () => {
    const r = await run({ items: [['First part.', ' Second part.'], [' Another item.']], annotations: true });
    expectAnswer(r, 'First part. Second part. Another item.', 1);
  });

  it('a refusal: one in-band 502 saying the model refused, not an empty done; not retried', async () => {
    const r = await run({ refusal: "I'm sorry, I can't help with that." });
    expectError(r, 502, /^Model refused to answer/);
    expect(JSON.stringify(r.events)).not.toContain('sorry');
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
  });

  it('response.incomplete (max output tokens): the text kept, done names the reason, stored; not retried', async () => {
    const r = await run({ text: ANSWER, incomplete: 'max_output_tokens' });
    expectAnswer(r, ANSWER, 1);
    expect(r.events[r.events.length - 1]).toMatchObject({
      incomplete_details: { reason: 'max_output_tokens' },
    });
    expect(r.record).toMatchObject({ incomplete_details: { reason: 'max_output_tokens' } });
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
  });
});

describe('issue 33: the wire', () => {
  it('SSE comments and keep-alive lines, CRLF line ends, `data:` without `event:`: the exact text', async () => {
    const wire = { crlf: true, dataOnly: true, keepAlive: true };
    expectAnswer(await run({ text: ANSWER, deltaDelayMs: 10, wire }), ANSWER, 1);
  });
});

describe('issue 33: a stream that breaks is retried per the LLM policy', () => {
  it.each(['failed', 'error', 'end', 'cut-mid-event'] as const)(
    'fault %s after 3 deltas: attempt 2 answers; a reset, then the exact text',
    async (fault) => {
      const r = await run({ text: ANSWER, deltaDelayMs: 10, sequence: [{ fault, afterDeltas: 3 }] });
      expectAnswer(r, ANSWER, 2);
      expect(resets(r.events)).toHaveLength(1);
      expect(fake.requestsFor(MODEL)).toHaveLength(2);
    },
  );

  it('every attempt breaks: after the 4 attempts, one in-band 502, the record failed', async () => {
    const faults = (['failed', 'error', 'end', 'cut-mid-event'] as const).map((fault) => ({
      fault,
      afterDeltas: 2,
    }));
    const r = await run({ text: ANSWER, sequence: faults });
    expectError(r, 502, /^Model server failed/);
    expect(fake.requestsFor(MODEL)).toHaveLength(4);
  });
});

describe('issue 33: retry hints and silence before the headers', () => {
  it('429 with retry-after: 2 (seconds): the retry waits 2 s, then the whole answer, no reset', async () => {
    const r = await run({ text: ANSWER, sequence: [{ fail: 429, retryAfterSeconds: 2 }] });
    expectAnswer(r, ANSWER, 2);
    expect(arrivals()[1]).toBeGreaterThanOrEqual(2000);
    expect(arrivals()[1]).toBeLessThan(MAX_RETRY_INTERVAL_MS);
  });

  it('503 with retry-after as an HTTP date 3 s ahead: the retry waits for that date', async () => {
    const r = await run({ text: ANSWER, sequence: [{ fail: 503, retryAfterDateIn: 3 }] });
    expectAnswer(r, ANSWER, 2);
    // Whole seconds: the date is 2–3 s ahead when sent.
    expect(arrivals()[1]).toBeGreaterThanOrEqual(2000);
    expect(arrivals()[1]).toBeLessThan(MAX_RETRY_INTERVAL_MS);
  });

  it("a retry-after beyond the retry policy's maximum interval waits that interval, not the hint", async () => {
    const r = await run({ text: ANSWER, sequence: [{ fail: 429, retryAfterSeconds: 30 }] });
    expectAnswer(r, ANSWER, 2);
    expect(arrivals()[1]).toBeGreaterThanOrEqual(MAX_RETRY_INTERVAL_MS - 100);
    expect(arrivals()[1]).toBeLessThan(MAX_RETRY_INTERVAL_MS + 3000);
  }, 30_000);

  it('headers that never come: the no-progress time ends the attempt, the retry answers; the stalled request was aborted', async () => {
    const r = await run({ text: ANSWER, sequence: [{ hangBeforeHeaders: true }] });
    expectAnswer(r, ANSWER, 2);
    expect(resets(r.events)).toHaveLength(0);
    expect(fake.requestsFor(MODEL).map((q) => q.aborted)).toEqual([true, false]);
    expect(arrivals()[1]).toBeGreaterThanOrEqual(stack.env.config.llm.noProgressMs);
  }, 30_000);
});

/** Deterministic text of about `bytes` UTF-8 bytes, with two- and three-byte characters among the words. */
function largeText(bytes: number): string {
  const words = ['alpha', 'café', 'bravo', 'naïve', '€100', 'charlie', '中文', 'delta'];
  const parts: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const word = `${words[i % words.length]}${i % 97} `;
    parts.push(word);
    size += Buffer.byteLength(word);
  }
  return parts.join('');
}

describe('issue 33: large answers', () => {
  /** At most one relay event per batching window of the execution's time, plus the first. */
  const batchedBound = (r: { elapsedMs: number }) => 1 + Math.ceil(r.elapsedMs / BATCH_MS);

  it('an answer of 1 MB in 1,024-character deltas: exact, stored; RSS grows ≤ 50 MB', async () => {
    const answer = largeText(2 ** 20);
    const { result: r, growthMb } = await rssGrowthWhile((sample) =>
      run({ text: answer, chunkSize: 1024, deltaDelayMs: 1 }, sample),
    );
    expectAnswer(r, answer, 1);
    expect(deltaCount(r.events)).toBeLessThanOrEqual(batchedBound(r));
    expect(growthMb).toBeLessThanOrEqual(50);
  }, 60_000);

  it('5,000 one-character deltas: exact; the relay carries them in batches, far fewer events than deltas', async () => {
    const answer = largeText(5000).slice(0, 5000);
    const { result: r, growthMb } = await rssGrowthWhile((sample) =>
      run({ text: answer, chunkSize: 1 }, sample),
    );
    expectAnswer(r, answer, 1);
    expect(deltaCount(r.events)).toBeLessThanOrEqual(Math.min(batchedBound(r), 500));
    expect(growthMb).toBeLessThanOrEqual(50);
  }, 60_000);
});

describe('issue 33: resumable mode, sequence numbers out of order', () => {
  /** The resumable LLM's answer, whose first connection writes events 4..6 again, or 7 before 6. */
  const disordered = (kind: 'repeat' | 'swap') =>
    runs.run(resumable, RESUMABLE, {
      text: ANSWER,
      deltaDelayMs: 10,
      background: { disorder: { kind, at: 6 } },
    });

  it('events repeated (a replay of the last three): skipped by number; the exact text, no reset, no resume', async () => {
    const r = await disordered('repeat');
    expectAnswer(r, ANSWER, 1);
    expect(resets(r.events)).toHaveLength(0);
    expect(fake.backgroundCounts(RESUMABLE)).toMatchObject({ creates: 1, resumes: 0 });
  });

  it('two events swapped: the stream is resumed after the last one in order; the exact text, no reset', async () => {
    const r = await disordered('swap');
    expectAnswer(r, ANSWER, 1);
    expect(resets(r.events)).toHaveLength(0);
    expect(fake.backgroundCounts(RESUMABLE)).toMatchObject({ creates: 1, resumes: 1, resumedAfter: [5] });
  });
});
