// The embedded quick start's relay (no Redis): the same contract as the Redis relay, one process.
// Each log keeps its encrypted entries for replay and hands every new one, decrypted once, to the
// feeds following it.
import type { RelayEvent } from '../domain/stream-events';
import type { KeyRing } from './crypto';
import { expiringEntries } from './expiring-entries';
import {
  compareEntryIds,
  EntryQueue,
  RELAY_TTL_MS,
  type Relay,
  type RelayEntry,
  type RelayFeed,
} from './relay';

interface MemoryLog {
  entries: { id: string; data: Buffer }[];
  lastMs: number;
  counter: number;
}

export class MemoryRelay implements Relay {
  private readonly logs = expiringEntries<MemoryLog>();
  private readonly feeds = new Map<string, Set<EntryQueue>>();

  constructor(private readonly keyring: KeyRing) {}

  async publish(executionId: string, event: RelayEvent): Promise<string> {
    const log = this.logs.get(executionId) ?? { entries: [], lastMs: 0, counter: 0 };
    const now = Date.now();
    if (now > log.lastMs) {
      log.lastMs = now;
      log.counter = 0;
    } else log.counter++;
    const id = `${log.lastMs}-${log.counter}`;
    log.entries.push({ id, data: this.keyring.encryptJson('relay', event) });
    // Each event restarts the log's hour (SPEC §9.6: expiry after the last event).
    this.logs.set(executionId, log, { ttl: RELAY_TTL_MS });
    const feeds = this.feeds.get(executionId);
    if (feeds) {
      const entry = [{ id, event }];
      for (const feed of feeds) feed.push(entry);
    }
    return id;
  }

  async read(executionId: string, afterId: string): Promise<RelayEntry[]> {
    return this.after(executionId, afterId);
  }

  follow(executionId: string, afterId: string): RelayFeed {
    const feed = new EntryQueue(() => {
      const feeds = this.feeds.get(executionId);
      feeds?.delete(feed);
      if (feeds?.size === 0) this.feeds.delete(executionId);
    });
    let feeds = this.feeds.get(executionId);
    if (!feeds) this.feeds.set(executionId, (feeds = new Set()));
    feeds.add(feed);
    feed.push(this.after(executionId, afterId));
    return feed;
  }

  async delete(executionId: string): Promise<void> {
    this.logs.delete(executionId);
  }

  private after(executionId: string, afterId: string): RelayEntry[] {
    const log = this.logs.get(executionId);
    if (!log) return [];
    return log.entries
      .filter((e) => compareEntryIds(e.id, afterId) > 0)
      .map((e) => ({ id: e.id, event: this.keyring.decryptJson<RelayEvent>('relay', e.data) }));
  }

  async close(): Promise<void> {
    for (const feeds of [...this.feeds.values()]) for (const feed of [...feeds]) feed.close();
    this.logs.clear();
  }
}
