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
