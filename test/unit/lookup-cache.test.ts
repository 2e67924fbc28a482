// infra/lookup-cache.ts (issue 15, search latency): copies younger than the TTL are served, an
// invalidation is honoured at once (also against a load already in flight), concurrent misses
// share one load, and absent rows or failed loads are never kept.
import { LookupCache } from '../../infra/lookup-cache';

/** A cache on a clock the test moves, and a loader that counts its calls. */
function setup(ttlMs = 1000) {
  let now = 0;
  const cache = new LookupCache<string | null>(ttlMs, 100, () => now);
  let loads = 0;
  let value: string | null = 'v1';
  const load = async (): Promise<string | null> => {
    loads += 1;
    return value;
  };
  return {
    cache,
    get: () => cache.get('k', load),
    loads: () => loads,
    set: (v: string | null) => (value = v),
    advance: (ms: number) => (now += ms),
  };
}

describe('LookupCache', () => {
  it('serves a copy younger than the TTL and loads again after it', async () => {
    const t = setup();
    expect(await t.get()).toBe('v1');
    t.set('v2');
    t.advance(999);
    expect(await t.get()).toBe('v1');
    expect(t.loads()).toBe(1);
    t.advance(1);
    expect(await t.get()).toBe('v2');
    expect(t.loads()).toBe(2);
  });

  it('loads again at once after an invalidation', async () => {
    const t = setup();
    await t.get();
    t.set('v2');
    t.cache.invalidate('k');
    expect(await t.get()).toBe('v2');
  });

  it('does not keep a load that an invalidation overtook', async () => {
    const cache = new LookupCache<string>(1000, 100, () => 0);
    let release!: (v: string) => void;
    const stale = cache.get('k', () => new Promise<string>((r) => (release = r)));
    // The write commits and invalidates while the earlier read is still on its way.
    cache.invalidate('k');
    const fresh = cache.get('k', async () => 'new');
    release('old');
    expect(await stale).toBe('old');
    expect(await fresh).toBe('new');
    expect(await cache.get('k', async () => 'other')).toBe('new');
  });

  it('shares one load between concurrent misses', async () => {
    const t = setup();
    const answers = await Promise.all([t.get(), t.get(), t.get()]);
    expect(answers).toEqual(['v1', 'v1', 'v1']);
    expect(t.loads()).toBe(1);
  });

  it('keeps neither absent rows nor failures, so a row created elsewhere is found at once', async () => {
    const t = setup();
    t.set(null);
    expect(await t.get()).toBeNull();
    t.set('created');
    expect(await t.get()).toBe('created');

    const cache = new LookupCache<string>(1000);
    await expect(cache.get('k', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get('k', async () => 'back')).toBe('back');
  });

  it('with a TTL of 0 loads every time', async () => {
    const t = setup(0);
    await t.get();
    await t.get();
    expect(t.loads()).toBe(2);
  });
});
