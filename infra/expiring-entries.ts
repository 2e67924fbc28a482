// The in-process stores' expiring entries (the embedded quick start runs without Redis): one
// lru-cache per store, each entry with its own TTL. Expired entries are dropped when read and, past
// the bound, the least recently used go first, so no store sweeps every entry on each write.
import { LRUCache } from 'lru-cache';

/** Entries one in-process store keeps at most (an hour of quick-start executions is far fewer). */
const EXPIRING_ENTRIES_MAX = 50_000;

export const expiringEntries = <V extends NonNullable<unknown>>(): LRUCache<string, V> =>
  new LRUCache<string, V>({ max: EXPIRING_ENTRIES_MAX });
