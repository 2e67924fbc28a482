// The execution relay (SPEC §9.6): an append-only log of encrypted events per execution. The
// LLM activity appends; API readers follow it from the start (or after an id) and are handed each
// new entry as it is appended. Redis in production (infra/redis-relay.ts: a stream per execution
// for replay, pub/sub for delivery); an in-process log for the embedded quick start
// (infra/memory-relay.ts).
import type { RelayEvent } from '../domain/stream-events';

export interface RelayEntry {
  /** Position in the log; ids increase. Its first part is the append time in ms. */
  id: string;
  event: RelayEvent;
}

/** One reader's view of one execution's log: every entry after its position, once, in order. */
export interface RelayFeed {
  /** The entries appended since the last call (or the feed's start); waits up to `blockMs` for one. */
  next(blockMs: number): Promise<RelayEntry[]>;
  /** Stops following; a waiting `next` resolves with what it has. */
  close(): void;
}

export interface Relay {
  publish(executionId: string, event: RelayEvent): Promise<string>;
  /** The entries after `afterId` ('0' for the start), as they are now. */
  read(executionId: string, afterId: string): Promise<RelayEntry[]>;
  /** Follows the log after `afterId`: what is there, then each entry as it is appended. */
  follow(executionId: string, afterId: string): RelayFeed;
  /** Drops an execution's log (DELETE /v1/responses/{id}: its encrypted text goes with the content). */
  delete(executionId: string): Promise<void>;
  close(): Promise<void>;
}

export const RELAY_START = '0';

/** Expiry of a log after its last event (SPEC §9.6: 1 h). */
export const RELAY_TTL_MS = 3_600_000;

export function relayKey(prefix: string, executionId: string): string {
  return `${prefix}exec:${executionId}:events`;
}

/** Append time (ms since epoch) of an entry id, for relay-lag metrics. */
export const entryTimeMs = (id: string): number => Number(id.split('-')[0]);

/** Orders two stream entry ids (`<ms>-<counter>`, or `<ms>` alone). */
export function compareEntryIds(a: string, b: string): number {
  const [am, ac] = a.split('-').map(Number) as [number, number | undefined];
  const [bm, bc] = b.split('-').map(Number) as [number, number | undefined];
  return am !== bm ? am - bm : (ac ?? 0) - (bc ?? 0);
}

/**
 * The entries a feed hands out, filled by its relay's delivery: `next` takes everything queued,
 * or waits for the next push. One waiter at a time (a feed has one reader).
 */
export class EntryQueue implements RelayFeed {
  private queued: RelayEntry[] = [];
  private wake: (() => void) | undefined;
  private failure: { err: unknown } | undefined;
  private closed = false;

  constructor(private readonly onClose: () => void = () => undefined) {}

  get isClosed(): boolean {
    return this.closed;
  }

  push(entries: RelayEntry[]): void {
    if (this.closed || entries.length === 0) return;
    for (const entry of entries) this.queued.push(entry);
    this.wake?.();
  }

  /** The next `next` rejects with `err` (the relay could not deliver). */
  fail(err: unknown): void {
    this.failure = { err };
    this.wake?.();
  }

  async next(blockMs: number): Promise<RelayEntry[]> {
    if (this.queued.length === 0 && !this.failure && !this.closed && blockMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => this.wake?.(), blockMs);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
    }
    if (this.failure) {
      const { err } = this.failure;
      this.failure = undefined;
      throw err;
    }
    const out = this.queued;
    this.queued = [];
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.onClose();
  }
}
