import { DeltaBatcher } from '../../activities/delta-batcher';
import type { RelayEvent } from '../../domain/stream-events';

/** A relay whose appends complete when the test says so. */
function manualRelay() {
  const published: RelayEvent[] = [];
  const waiting: (() => void)[] = [];
  return {
    published,
    publish: (event: RelayEvent) =>
      new Promise<void>((resolve) => {
        published.push(event);
        waiting.push(resolve);
      }),
    completeNext: async () => {
      waiting.shift()?.();
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe('DeltaBatcher', () => {
  it('publishes a delta at once when nothing is in flight, and the deltas that arrive meanwhile as one, in order, numbered', async () => {
    const relay = manualRelay();
    const batcher = new DeltaBatcher(2, relay.publish);
    batcher.push('Hel');
    expect(relay.published).toEqual([{ type: 'delta', attempt: 2, text: 'Hel', n: 1 }]);
    batcher.push('lo');
    batcher.push(', ');
    batcher.push('world');
    expect(relay.published).toHaveLength(1);
    await relay.completeNext();
    expect(relay.published[1]).toEqual({ type: 'delta', attempt: 2, text: 'lo, world', n: 2 });
    const flushed = batcher.flush();
    await relay.completeNext();
    await flushed;
    batcher.push('!');
    expect(relay.published[2]).toEqual({ type: 'delta', attempt: 2, text: '!', n: 3 });
    await relay.completeNext();
    await batcher.flush();
    expect(relay.published.map((e) => (e.type === 'delta' ? e.text : '')).join('')).toBe('Hello, world!');
  });

  it("a failed append fails the next push and the flush with the relay's error", async () => {
    const down = new Error('relay down');
    const batcher = new DeltaBatcher(1, () => Promise.reject(down));
    batcher.push('a');
    await batcher.settled();
    expect(() => batcher.push('b')).toThrow(down);
    await expect(batcher.flush()).rejects.toBe(down);
  });
});

describe('DeltaBatcher in time', () => {
  const texts = (events: RelayEvent[]) => events.map((e) => (e.type === 'delta' ? e.text : e.type));

  it('§9.5: the first delta goes out at once; the deltas of the next window go out together when it ends; numbering and text stay exact', async () => {
    jest.useFakeTimers();
    try {
      const published: RelayEvent[] = [];
      const batcher = new DeltaBatcher(1, async (e) => void published.push(e), 30);
      batcher.push('a');
      await Promise.resolve();
      expect(texts(published)).toEqual(['a']);
      batcher.push('b');
      jest.advanceTimersByTime(10);
      batcher.push('c');
      expect(texts(published)).toEqual(['a']);
      await jest.advanceTimersByTimeAsync(20);
      expect(texts(published)).toEqual(['a', 'bc']);
      // A delta after a quiet window goes out at once again.
      await jest.advanceTimersByTimeAsync(100);
      batcher.push('d');
      await Promise.resolve();
      expect(texts(published)).toEqual(['a', 'bc', 'd']);
      batcher.push('e');
      await batcher.flush();
      expect(published).toEqual([
        { type: 'delta', attempt: 1, text: 'a', n: 1 },
        { type: 'delta', attempt: 1, text: 'bc', n: 2 },
        { type: 'delta', attempt: 1, text: 'd', n: 3 },
        { type: 'delta', attempt: 1, text: 'e', n: 4 },
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('a flush and a settle publish what waits for its window; a settle after a failure sends nothing more and does not throw', async () => {
    const published: RelayEvent[] = [];
    const batcher = new DeltaBatcher(1, async (e) => void published.push(e), 60_000);
    batcher.push('a');
    batcher.push('b');
    await batcher.settled();
    expect(texts(published)).toEqual(['a', 'b']);
    const down = new Error('relay down');
    const failing = new DeltaBatcher(1, () => Promise.reject(down), 60_000);
    failing.push('x');
    await failing.settled();
    expect(() => failing.push('y')).toThrow(down);
    await expect(failing.flush()).rejects.toBe(down);
  });
});

// Issue 33: OpenAI-compatible servers (vLLM, Ollama, LiteLLM, proxies) send empty deltas. An empty
// push once started a drain that finished synchronously, before `inFlight` stored it: nothing was
// published again and `settled()` spun in microtasks forever (the process hung). A spin starves
// every timer, jest's timeout included, so each case first checks that a later delta still goes
// out at once (which fails, not hangs, on a stuck batcher), and only then settles.
describe('DeltaBatcher with empty deltas', () => {
  const WINDOW_MS = 30;
  const texts = (events: RelayEvent[]) => events.map((e) => (e.type === 'delta' ? e.text : e.type));
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const QUIET = WINDOW_MS * 3;

  /** Pushes each string, pausing `QUIET` ms at each `null`; then a sentinel after a quiet window. */
  async function run(steps: (string | null)[]) {
    const events: RelayEvent[] = [];
    const batcher = new DeltaBatcher(1, async (e) => void events.push(e), WINDOW_MS);
    for (const step of steps) {
      if (step === null) await pause(QUIET);
      else batcher.push(step);
    }
    await pause(QUIET);
    batcher.push('.');
    await pause(5);
    const text = steps.filter((s) => s !== null).join('');
    // Out at once after a quiet window, whatever empty deltas came before.
    expect(texts(events).join('')).toBe(`${text}.`);
    await batcher.settled();
    expect(events.every((e) => e.type === 'delta' && e.text !== '')).toBe(true);
    expect(events.map((e) => (e.type === 'delta' ? e.n : 0))).toEqual(events.map((_, i) => i + 1));
    return { batcher, events };
  }

  it.each<[string, (string | null)[]]>([
    ['first, before any text', ['', 'a', 'b']],
    ['first, alone, after a quiet start', ['', null, 'a']],
    ['right after a delta', ['a', '', 'b']],
    ['after a pause longer than the window', ['a', null, '', 'b']],
    ['after a pause, then another pause', ['a', null, '', null, 'b']],
    ['last', ['a', 'b', '']],
    ['last, after a pause', ['a', 'b', null, '']],
    ['several in a row', ['', '', 'a', '', '', 'b', '', '']],
  ])('an empty delta %s publishes nothing of its own; text and numbering stay exact', async (_, steps) => {
    await run(steps);
  });

  it('an empty delta while a delta waits for its window keeps that delta waiting, then sends it', async () => {
    const events: RelayEvent[] = [];
    const batcher = new DeltaBatcher(1, async (e) => void events.push(e), 60_000);
    batcher.push('a');
    await pause(5);
    batcher.push('b');
    batcher.push('');
    await pause(5);
    expect(texts(events)).toEqual(['a']);
    await batcher.flush();
    expect(texts(events)).toEqual(['a', 'b']);
  });

  it("an empty delta's sequence number is not relayed as an event; the next text's is", async () => {
    const events: RelayEvent[] = [];
    const through: number[] = [];
    const batcher = new DeltaBatcher(
      1,
      async (e) => void events.push(e),
      0,
      (n) => through.push(n),
    );
    batcher.push('', 4);
    await pause(5);
    batcher.push('a', 5);
    await pause(5);
    expect(events).toEqual([{ type: 'delta', attempt: 1, text: 'a', n: 1, through: 5 }]);
    batcher.push('', 6);
    await batcher.settled();
    expect(events).toHaveLength(1);
    expect(through).toEqual([5]);
  });
});
