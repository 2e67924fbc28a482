// The embedded quick start's relay (no Redis): the same contract as the Redis relay, one process.
import { EventEmitter } from 'node:events';
import type { RelayEvent } from '../domain/stream-events';
import type { KeyRing } from './crypto';
import { expiringEntries } from './expiring-entries';
import { compareEntryIds, RELAY_TTL_MS, type Relay, type RelayEntry } from './relay';

interface MemoryLog {
  entries: { id: string; data: Buffer }[];
  lastMs: number;
  counter: number;
}

export class MemoryRelay implements Relay {
  private readonly logs = expiringEntries<MemoryLog>();
  private readonly appended = new EventEmitter().setMaxListeners(0);

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
    this.appended.emit(executionId);
    return id;
  }

  async read(executionId: string, afterId: string, blockMs: number): Promise<RelayEntry[]> {
    const found = this.after(executionId, afterId);
    if (found.length > 0 || blockMs <= 0) return found;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.appended.off(executionId, done);
        resolve();
      };
      const timer = setTimeout(done, blockMs);
      this.appended.on(executionId, done);
    });
    return this.after(executionId, afterId);
  }

  private after(executionId: string, afterId: string): RelayEntry[] {
    const log = this.logs.get(executionId);
    if (!log) return [];
    return log.entries
      .filter((e) => compareEntryIds(e.id, afterId) > 0)
      .map((e) => ({ id: e.id, event: this.keyring.decryptJson<RelayEvent>('relay', e.data) }));
  }

  async close(): Promise<void> {
    this.logs.clear();
  }
}
