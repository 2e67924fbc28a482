// The embedded quick start's in-process stores keep entries until their own TTL and no longer.
import { KeyRing } from '../../infra/crypto';
import { MemoryExecuteCache } from '../../infra/execute-cache';
import { MemoryIdempotencyStore } from '../../infra/idempotency-store';
import { MemoryTraceStore } from '../../infra/trace-store';
import { sleep } from '../helpers/wait';

const keyring = new KeyRing('memory-stores-test-secret-0123456789');
const answer = { text: 'cached', usage: { input_tokens: 1, output_tokens: 2 }, provider: 'p', model: 'm' };

describe('in-process stores with expiring entries', () => {
  it('a trace is readable by its owner until its TTL and gone after it', async () => {
    const store = new MemoryTraceStore(keyring);
    await store.put('t-short', 'key-1', { step: 1 }, 0.05);
    await store.put('t-long', 'key-1', { step: 2 }, 60);
    expect(await store.get('t-short', 'key-1')).toEqual({ step: 1 });
    expect(await store.get('t-short', 'key-2')).toBeNull();
    await sleep(120);
    expect(await store.get('t-short', 'key-1')).toBeNull();
    expect(await store.get('t-long', 'key-1')).toEqual({ step: 2 });
  });

  it('the EXECUTE cache counts hits and misses and live entries only', async () => {
    const cache = new MemoryExecuteCache(keyring, 0.05);
    await cache.set('prompt:execute:p1:h:depth1', answer);
    expect(await cache.get('prompt:execute:p1:h:depth1')).toEqual(answer);
    expect((await cache.stats()).entries).toBe(1);
    await sleep(120);
    expect(await cache.get('prompt:execute:p1:h:depth1')).toBeNull();
    expect(await cache.stats()).toMatchObject({ hits: 1, misses: 1, entries: 0 });
  });

  it('clearing a prompt drops its answers and keeps the others', async () => {
    const cache = new MemoryExecuteCache(keyring, 60);
    await cache.set('prompt:execute:p1:h:depth1', answer);
    await cache.set('prompt:execute:p2:h:depth1', answer);
    await cache.clearPrompt('p1');
    expect(await cache.get('prompt:execute:p1:h:depth1')).toBeNull();
    expect(await cache.get('prompt:execute:p2:h:depth1')).toEqual(answer);
  });

  it('an idempotency claim holds until its TTL, then the key can be claimed again', async () => {
    const store = new MemoryIdempotencyStore();
    expect(await store.claim('k', 'first', 50)).toBeNull();
    expect(await store.claim('k', 'second', 50)).toBe('first');
    expect(await store.replace('k', 'other', 'x', 50)).toBe(false);
    expect(await store.replace('k', 'first', 'done', 50)).toBe(true);
    expect(await store.claim('k', 'third', 50)).toBe('done');
    await sleep(120);
    expect(await store.claim('k', 'fourth', 50)).toBeNull();
    await store.release('k', 'fourth');
    expect(await store.claim('k', 'fifth', 50)).toBeNull();
  });

  it('DX-4: a claim with a lease is taken over only once the lease lapsed; the taker holds a lease of its own', async () => {
    const store = new MemoryIdempotencyStore();
    expect(await store.claim('k', 'first', 60_000, 40)).toBeNull();
    expect(await store.takeOver('k', 'first', 'second', 60_000, 40)).toBe(false);
    expect(await store.renewLease('k', 'first', 40)).toBe(true);
    await sleep(80);
    expect(await store.renewLease('k', 'first', 40)).toBe(false);
    expect(await store.takeOver('k', 'first', 'second', 60_000, 40)).toBe(true);
    expect(await store.takeOver('k', 'second', 'third', 60_000, 40)).toBe(false);
    expect(await store.release('k', 'first')).toBe(false);
    expect(await store.release('k', 'second')).toBe(true);
  });
});
