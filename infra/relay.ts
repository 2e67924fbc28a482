// The execution relay (SPEC §9.6): an append-only log of encrypted events per execution. The
// LLM activity appends; API readers read from the start (or after an id) and block for more.
// Redis Streams in production; an in-process log for the embedded quick start.
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { RelayEvent } from '../domain/stream-events';
import type { KeyRing } from './crypto';

export interface RelayEntry {
  /** Position in the log; ids increase. Its first part is the append time in ms. */
  id: string;
  event: RelayEvent;
}

export interface Relay {
  publish(executionId: string, event: RelayEvent): Promise<string>;
  /** Entries after `afterId` ('0' for the start); waits up to `blockMs` when there are none. */
  read(executionId: string, afterId: string, blockMs: number): Promise<RelayEntry[]>;
  close(): Promise<void>;
}

export const RELAY_START = '0';

/** Expiry of a log after its last event (SPEC §9.6: 1 h). */
const TTL_MS = 3_600_000;

/** How long a publish or read waits for an unreachable Redis (a restart) before it fails. */
export const REDIS_OUTAGE_TOLERANCE_MS = 30_000;
const RECONNECT_POLL_MS = 250;

/** Redis unreachable or not ready yet, as opposed to a command it refused. */
function isOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.name !== 'ReplyError' || /^(LOADING|BUSY|TRYAGAIN|MASTERDOWN)\b/.test(err.message);
}

export function relayKey(prefix: string, executionId: string): string {
  return `${prefix}exec:${executionId}:events`;
}

/** Append time (ms since epoch) of an entry id, for relay-lag metrics. */
export const entryTimeMs = (id: string): number => Number(id.split('-')[0]);

export class RedisRelay implements Relay {
  private readonly idle: Redis[] = [];
  private readonly all = new Set<Redis>();

  constructor(
    private readonly redis: Redis,
    private readonly keyring: KeyRing,
    private readonly prefix: string,
    private readonly outageToleranceMs = REDIS_OUTAGE_TOLERANCE_MS,
  ) {}

  /**
   * Runs a Redis call again while Redis is unreachable (ioredis reconnects by itself), so that a
   * Redis restart costs neither a model call nor the client's stream; gives up after the tolerance.
   */
  private async outlasting<T>(call: (again: boolean) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.outageToleranceMs;
    for (let again = false; ; again = true) {
      try {
        return await call(again);
      } catch (err) {
        if (!isOutage(err) || Date.now() >= deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_POLL_MS));
      }
    }
  }

  async publish(executionId: string, event: RelayEvent): Promise<string> {
    const key = relayKey(this.prefix, executionId);
    // Unique (random IV): a retried append can tell whether its lost reply hid a stored entry.
    const data = this.keyring.encryptJson('relay', event).toString('base64');
    return this.outlasting(async (again) => {
      if (again) {
        const tail = await this.redis.xrevrange(key, '+', '-', 'COUNT', 100);
        const stored = tail.find(([, fields]) => fields[1] === data);
        if (stored) return stored[0];
      }
      const result = await this.redis.multi().xadd(key, '*', 'd', data).pexpire(key, TTL_MS).exec();
      const [err, id] = result?.[0] ?? [new Error('Redis transaction aborted'), null];
      if (err) throw err;
      return id as string;
    });
  }

  async read(executionId: string, afterId: string, blockMs: number): Promise<RelayEntry[]> {
    // XREAD BLOCK holds its connection, so each concurrent reader borrows its own.
    const conn = this.idle.pop() ?? this.open();
    try {
      // BLOCK 0 would wait forever: a non-positive wait is a plain read.
      const key = relayKey(this.prefix, executionId);
      const reply = await this.outlasting(() =>
        blockMs > 0
          ? conn.xread('BLOCK', blockMs, 'STREAMS', key, afterId)
          : conn.xread('STREAMS', key, afterId),
      );
      const entries = reply?.[0]?.[1] ?? [];
      return entries.map(([id, fields]) => ({
        id,
        event: this.keyring.decryptJson<RelayEvent>('relay', Buffer.from(fields[1] ?? '', 'base64')),
      }));
    } finally {
      if (this.idle.length < 64) this.idle.push(conn);
      else this.drop(conn);
    }
  }

  private open(): Redis {
    const conn = this.redis.duplicate();
    this.all.add(conn);
    return conn;
  }

  private drop(conn: Redis): void {
    this.all.delete(conn);
    conn.disconnect();
  }

  async close(): Promise<void> {
    for (const conn of this.all) conn.disconnect();
    this.all.clear();
    this.idle.length = 0;
  }
}

interface MemoryLog {
  entries: { id: string; data: Buffer }[];
  expiresAt: number;
  lastMs: number;
  counter: number;
}

export class MemoryRelay implements Relay {
  private readonly logs = new Map<string, MemoryLog>();
  private readonly appended = new EventEmitter().setMaxListeners(0);

  constructor(private readonly keyring: KeyRing) {}

  async publish(executionId: string, event: RelayEvent): Promise<string> {
    this.sweep();
    let log = this.logs.get(executionId);
    if (!log) {
      log = { entries: [], expiresAt: 0, lastMs: 0, counter: 0 };
      this.logs.set(executionId, log);
    }
    const now = Date.now();
    if (now > log.lastMs) {
      log.lastMs = now;
      log.counter = 0;
    } else log.counter++;
    const id = `${log.lastMs}-${log.counter}`;
    log.entries.push({ id, data: this.keyring.encryptJson('relay', event) });
    log.expiresAt = now + TTL_MS;
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
      .filter((e) => compareIds(e.id, afterId) > 0)
      .map((e) => ({ id: e.id, event: this.keyring.decryptJson<RelayEvent>('relay', e.data) }));
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, log] of this.logs) if (log.expiresAt < now) this.logs.delete(id);
  }

  async close(): Promise<void> {
    this.logs.clear();
  }
}

function compareIds(a: string, b: string): number {
  const [am, ac] = a.split('-').map(Number) as [number, number | undefined];
  const [bm, bc] = b.split('-').map(Number) as [number, number | undefined];
  return am !== bm ? am - bm : (ac ?? 0) - (bc ?? 0);
}
