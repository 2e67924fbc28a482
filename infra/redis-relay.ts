// The relay on Redis Streams (SPEC §9.6): one stream per execution, encrypted entries. Appends
// and non-blocking reads go through the shared client; readers that must wait share one
// blocking connection (infra/stream-multiplexer.ts).
import { isTerminal, type RelayEvent } from '../domain/stream-events';
import type { KeyRing } from './crypto';
import type { Logger } from './logger';
import { outlastingOutage, type RedisClient } from './redis-client';
import { RelayExpiry } from './relay-expiry';
import { relayKey, type Relay, type RelayEntry } from './relay';
import { rawEntries, StreamMultiplexer, type RawEntry } from './stream-multiplexer';

/** How long a publish or read waits for an unreachable Redis (a restart) before it fails. */
export const REDIS_OUTAGE_TOLERANCE_MS = 30_000;
/** A retried append looks for its own entry among the stream's last entries. */
const RESENT_LOOKBACK = 100;

export class RedisRelay implements Relay {
  private readonly multiplexer: StreamMultiplexer;
  private readonly expiry = new RelayExpiry();

  constructor(
    private readonly redis: RedisClient,
    private readonly keyring: KeyRing,
    private readonly prefix: string,
    logger: Logger,
    private readonly outageToleranceMs = REDIS_OUTAGE_TOLERANCE_MS,
  ) {
    this.multiplexer = new StreamMultiplexer(redis, logger);
  }

  async publish(executionId: string, event: RelayEvent): Promise<string> {
    const key = relayKey(this.prefix, executionId);
    // Unique (random IV): a retried append can tell whether its lost reply hid a stored entry.
    const data = this.keyring.encryptJson('relay', event).toString('base64');
    const terminal = isTerminal(event);
    const ttlMs = this.expiry.due(executionId, terminal);
    // A Redis restart must cost neither a model call nor the client's stream.
    const id = await outlastingOutage(async (again) => {
      if (again) {
        const tail = await this.redis.xRevRange(key, '+', '-', { COUNT: RESENT_LOOKBACK });
        // Found: the lost reply was of a MULTI, so its PEXPIRE was applied with the entry.
        const stored = (tail ?? []).find((entry) => entry.message.d === data);
        if (stored) return stored.id;
      }
      if (ttlMs === undefined) return this.redis.xAdd(key, '*', { d: data });
      const [added] = await this.redis.multi().xAdd(key, '*', { d: data }).pExpire(key, ttlMs).exec();
      return String(added);
    }, this.outageToleranceMs);
    if (ttlMs !== undefined) this.expiry.set(executionId, terminal);
    return id;
  }

  async read(executionId: string, afterId: string, blockMs: number): Promise<RelayEntry[]> {
    const key = relayKey(this.prefix, executionId);
    const reply = await outlastingOutage(
      () => this.redis.xRead({ key, id: afterId }),
      this.outageToleranceMs,
    );
    const stored: RawEntry[] = rawEntries(reply).flatMap((stream) => stream.entries);
    // Nothing yet: wait on the shared blocking connection (a non-positive wait is a plain read).
    const entries =
      stored.length > 0 || blockMs <= 0 ? stored : await this.multiplexer.wait(key, afterId, blockMs);
    return entries.map(({ id, data }) => ({
      id,
      event: this.keyring.decryptJson<RelayEvent>('relay', Buffer.from(data, 'base64')),
    }));
  }

  async close(): Promise<void> {
    await this.multiplexer.close();
  }
}
