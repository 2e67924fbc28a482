// The execution relay (SPEC §9.6): an append-only log of encrypted events per execution. The
// LLM activity appends; API readers read from the start (or after an id) and block for more.
// Redis Streams in production (infra/redis-relay.ts); an in-process log for the embedded quick
// start (infra/memory-relay.ts).
import type { RelayEvent } from '../domain/stream-events';

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
