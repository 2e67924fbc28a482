// One model stream per execution (activities/model-stream-claim.ts): a retry waits while the
// attempt before it streams and holds the claim; a dead holder's claim lapses; a cancelled
// execution takes the claim from the live stream, which then stops at its next renewal.
import { ModelStreamClaim } from '../../activities/model-stream-claim';
import { MemoryIdempotencyStore, type IdempotencyStore } from '../../infra/idempotency-store';
import { sleep } from '../helpers/wait';

const EXECUTION = '01a234be-62e7-739d-9956-1d51ff74d8a9';
const SHORT_MS = 150;

const never = (): boolean => false;

describe('model stream claim', () => {
  it('the first attempt holds it at once; a retry waits until it is released, then holds it', async () => {
    const claims = new MemoryIdempotencyStore();
    const first = new ModelStreamClaim(claims, EXECUTION, 1);
    const retry = new ModelStreamClaim(claims, EXECUTION, 2);
    expect(await first.acquire(new AbortController().signal, never)).toEqual({ waited: false });
    let acquired = false;
    const waiting = retry.acquire(new AbortController().signal, never).then((r) => {
      acquired = true;
      return r;
    });
    await sleep(400);
    expect(acquired).toBe(false);
    expect(await first.renew()).toBe(true);
    await first.release();
    expect(await waiting).toEqual({ waited: true });
    // The retry holds it now: the first attempt, were it still renewing, must stop.
    expect(await first.renew()).toBe(false);
  });

  it('the claim of an attempt that stopped renewing (its process died) lapses, and the retry takes it', async () => {
    const claims = new MemoryIdempotencyStore();
    await new ModelStreamClaim(claims, EXECUTION, 1, SHORT_MS).acquire(new AbortController().signal, never);
    const started = Date.now();
    const retry = new ModelStreamClaim(claims, EXECUTION, 2, SHORT_MS);
    expect(await retry.acquire(new AbortController().signal, never)).toEqual({ waited: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(SHORT_MS - 20);
  });

  it('a lapsed claim is renewed by its holder while no other attempt took it', async () => {
    const claims = new MemoryIdempotencyStore();
    const holder = new ModelStreamClaim(claims, EXECUTION, 1, SHORT_MS);
    await holder.acquire(new AbortController().signal, never);
    await sleep(SHORT_MS * 2);
    expect(await holder.renew()).toBe(true);
    expect(await claims.claim(EXECUTION, '2', 1000)).toBe('1');
  });

  it('a waiting retry cancelled with its execution takes the claim, so the live stream stops', async () => {
    const claims = new MemoryIdempotencyStore();
    const live = new ModelStreamClaim(claims, EXECUTION, 1);
    await live.acquire(new AbortController().signal, never);
    const cancel = new AbortController();
    const waiting = new ModelStreamClaim(claims, EXECUTION, 2).acquire(cancel.signal, () => true);
    await sleep(50);
    cancel.abort();
    await expect(waiting).rejects.toThrow();
    expect(await live.renew()).toBe(false);
  });

  it('a waiting retry that stops for another reason (Temporal gave up on it too) leaves the live stream alone', async () => {
    const claims = new MemoryIdempotencyStore();
    const live = new ModelStreamClaim(claims, EXECUTION, 1);
    await live.acquire(new AbortController().signal, never);
    const stop = new AbortController();
    const waiting = new ModelStreamClaim(claims, EXECUTION, 2).acquire(stop.signal, never);
    await sleep(50);
    stop.abort();
    await expect(waiting).rejects.toThrow();
    expect(await live.renew()).toBe(true);
  });

  it('with the store out of reach an attempt goes on as without claims, and a renewal does not stop it', async () => {
    const down = new Error('ECONNREFUSED');
    const unreachable: IdempotencyStore = {
      claim: () => Promise.reject(down),
      replace: () => Promise.reject(down),
      release: () => Promise.reject(down),
    };
    const claim = new ModelStreamClaim(unreachable, EXECUTION, 2);
    expect(await claim.acquire(new AbortController().signal, never)).toEqual({ waited: false });
    expect(await claim.renew()).toBe(true);
    await expect(claim.release()).resolves.toBeUndefined();
  });

  it('claims of different executions are independent', async () => {
    const claims = new MemoryIdempotencyStore();
    await new ModelStreamClaim(claims, EXECUTION, 1).acquire(new AbortController().signal, never);
    const other = new ModelStreamClaim(claims, 'another-execution', 1);
    expect(await other.acquire(new AbortController().signal, never)).toEqual({ waited: false });
  });
});
