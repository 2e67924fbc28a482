// Short-lived in-process copies of the rows every request of a hot path reads again (pipelines and
// embedding models on the search path; issue 15 "search latency": each lookup was a round trip of
// 1 ms or more). API key credentials are not cached: a deleted key stops working at once on every
// replica (SPEC §2). A write through this process invalidates its entry at once; a write
// through another replica is seen here after at most `ttlMs` (DESIGN §8: replicas share nothing in
// process). Concurrent misses share one load; a load that an invalidation overtook is not kept, and
// neither are absent rows (null) or failures, so a row created elsewhere is found at once.
import { LRUCache } from 'lru-cache';

/** How old a copy may be when a write went through another replica (docs/decisions.md). */
export const LOOKUP_CACHE_TTL_MS = 1000;

/** Rows kept at most per cache; past it, the least recently used go first. */
const LOOKUP_CACHE_MAX = 10_000;

interface Entry<V> {
  value: Promise<V>;
  expiresAt: number;
}

export class LookupCache<V> {
  private readonly entries: LRUCache<string, Entry<V>>;

  constructor(
    private readonly ttlMs = LOOKUP_CACHE_TTL_MS,
    max = LOOKUP_CACHE_MAX,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.entries = new LRUCache<string, Entry<V>>({ max });
  }

  /** The copy of `key` if younger than the TTL, else `load()`'s answer (kept unless null). */
  get(key: string, load: () => Promise<V>): Promise<V> {
    if (this.ttlMs <= 0) return load();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.value;
    const entry: Entry<V> = { value: load(), expiresAt: this.now() + this.ttlMs };
    this.entries.set(key, entry);
    const forget = (): void => {
      if (this.entries.peek(key) === entry) this.entries.delete(key);
    };
    entry.value.then((v) => v === null && forget(), forget);
    return entry.value;
  }

  /** Called after a write of `key` committed: the next `get` loads it again. */
  invalidate(key: string): void {
    this.entries.delete(key);
  }
}
