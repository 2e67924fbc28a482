// One Redis connection waits for new entries on behalf of every blocked relay reader of this
// process: a single `XREAD BLOCK … STREAMS k1 k2 … id1 id2 …` over all waiting readers' streams,
// whose entries are handed to the readers they are for. XREAD BLOCK holds its connection, so
// without this each concurrent reader would hold one of its own.
//
// A reader that arrives while the XREAD is blocked on other streams wakes it with
// `CLIENT UNBLOCK <id>` from the shared command connection, so that the next XREAD includes its
// stream at once instead of after a whole block period. The UNBLOCK can reach Redis before the
// XREAD it targets (two sockets): it answers 0 then, and is sent again until that XREAD returns.
import { compareEntryIds } from './relay';
import { isRedisOutage, watchConnection, type RedisClient } from './redis-client';
import type { Logger } from './logger';

/** A stream entry as stored: its id and its (encrypted) `d` field. */
export interface RawEntry {
  id: string;
  data: string;
}

/** XREAD's reply in node-redis's shape for every protocol version, as entries per stream. */
type XReadReply = { name: string; messages: { id: string; message: Record<string, string> }[] }[] | null;

export function rawEntries(reply: XReadReply): { name: string; entries: RawEntry[] }[] {
  return (reply ?? []).map(({ name, messages }) => ({
    name,
    entries: messages.map((m) => ({ id: m.id, data: m.message.d ?? '' })),
  }));
}

interface Waiter {
  key: string;
  afterId: string;
  resolve(entries: RawEntry[]): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

/** An XREAD in flight: its streams and the id of the connection it blocks. */
interface Flight {
  keys: Set<string>;
  clientId: Promise<number>;
}

/** Longest single XREAD: readers time out by themselves, this only bounds an idle wait. */
export const LOOP_BLOCK_MS = 1000;
const OUTAGE_RETRY_MS = 250;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class StreamMultiplexer {
  private readonly waiting = new Map<string, Set<Waiter>>();
  private connection: { client: RedisClient; ready: Promise<unknown> } | undefined;
  private running = false;
  private closed = false;
  /** The XREAD in flight, if any. */
  private inFlight: Flight | undefined;
  private waking = false;

  constructor(
    private readonly client: RedisClient,
    private readonly logger: Logger,
  ) {}

  /** Entries of `key` after `afterId`, as soon as there are some; [] after `blockMs`. */
  wait(key: string, afterId: string, blockMs: number): Promise<RawEntry[]> {
    if (this.closed) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        key,
        afterId,
        resolve,
        reject,
        timer: setTimeout(() => this.settle(waiter, []), blockMs),
      };
      let set = this.waiting.get(key);
      if (!set) this.waiting.set(key, (set = new Set()));
      set.add(waiter);
      if (!this.running) void this.loop();
      else void this.wake();
    });
  }

  /** Number of readers waiting (for metrics and tests). */
  get waiters(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }

  private settle(waiter: Waiter, entries: RawEntry[] | Error): void {
    clearTimeout(waiter.timer);
    const set = this.waiting.get(waiter.key);
    if (!set?.delete(waiter)) return;
    if (set.size === 0) this.waiting.delete(waiter.key);
    if (entries instanceof Error) waiter.reject(entries);
    else waiter.resolve(entries);
  }

  private async blockingConnection(): Promise<RedisClient> {
    if (!this.connection) {
      // Named after the shared client, so that CLIENT LIST shows whose reader it is.
      const name = `${this.client.options?.name ?? 'agentry'}:relay-reader`;
      const client = watchConnection(this.client.duplicate({ name }), this.logger, 'relay-reader');
      this.connection = { client, ready: client.connect() };
    }
    await this.connection.ready;
    return this.connection.client;
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.size > 0 && !this.closed) {
        let flight: Flight | undefined;
        try {
          const conn = await this.blockingConnection();
          // Per stream the lowest cursor of its readers: each keeps what follows its own.
          const streams = [...this.waiting].map(([key, set]) => ({
            key,
            id: [...set].map((w) => w.afterId).reduce((a, b) => (compareEntryIds(a, b) <= 0 ? a : b)),
          }));
          // CLIENT ID goes out with the XREAD on the same connection: no extra round trip, and
          // the id is right across reconnections. Its reply means the XREAD reached Redis.
          flight = { keys: new Set(streams.map((s) => s.key)), clientId: conn.clientId() };
          this.inFlight = flight;
          const [, reply] = await Promise.all([
            flight.clientId,
            conn.xRead(streams, { BLOCK: LOOP_BLOCK_MS }),
          ]);
          this.inFlight = undefined;
          this.dispatch(reply);
        } catch (err) {
          this.inFlight = undefined;
          if (this.closed) break;
          if (isRedisOutage(err)) await sleep(OUTAGE_RETRY_MS);
          else
            for (const key of flight?.keys ?? [...this.waiting.keys()])
              for (const w of this.waiting.get(key) ?? []) this.settle(w, err as Error);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private dispatch(reply: XReadReply): void {
    for (const { name, entries } of rawEntries(reply)) {
      for (const waiter of [...(this.waiting.get(name) ?? [])]) {
        const after = entries.filter((e) => compareEntryIds(e.id, waiter.afterId) > 0);
        if (after.length > 0) this.settle(waiter, after);
      }
    }
  }

  /** Ends the XREAD in flight when it does not cover every waiting reader's stream. */
  private async wake(): Promise<void> {
    if (this.waking) return;
    this.waking = true;
    try {
      for (;;) {
        const flight = this.inFlight;
        // Nothing in flight: the loop's next XREAD includes every waiting reader.
        if (!flight || [...this.waiting.keys()].every((key) => flight.keys.has(key))) return;
        const clientId = await flight.clientId;
        if (this.inFlight !== flight) continue;
        if ((await this.client.clientUnblock(clientId)) === 1) return;
        // 0: that XREAD is returning by itself, or (rarely) was not processed yet: look again.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch {
      // Redis unreachable: the loop retries by itself and readers time out meanwhile.
    } finally {
      this.waking = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const set of [...this.waiting.values()]) for (const w of [...set]) this.settle(w, []);
    // Also ends a connect still waiting for Redis, and the XREAD in flight.
    this.connection?.client.destroy();
    this.connection = undefined;
  }
}
