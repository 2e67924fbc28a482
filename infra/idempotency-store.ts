// Idempotency keys (SPEC §15 DX-4): one small value per key with an expiry, claimed atomically so
// that two concurrent requests with the same key start one execution. Redis (SET NX, and Lua
// compare-and-set / compare-and-delete) in production; an in-process map for the quick start.
// The same claims, in their own namespace, say which attempt streams an execution's answer
// (activities/model-stream-claim.ts).
import { expiringEntries } from './expiring-entries';
import { outlastingOutage, type RedisClient } from './redis-client';

export interface IdempotencyStore {
  /** Stores `value` under `key` unless the key is held: null when claimed, else the value held. */
  claim(key: string, value: string, ttlMs: number): Promise<string | null>;
  /** Replaces the value of a key that still holds `expected` (with a new expiry); false otherwise. */
  replace(key: string, expected: string, value: string, ttlMs: number): Promise<boolean>;
  /** Deletes the key if it still holds `expected`. */
  release(key: string, expected: string): Promise<void>;
}

const REPLACE_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0`;
const DELETE_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) end return 0`;

/** A claim outlasts a dropped connection (a reconnect takes well under a second), not an outage. */
const CLAIM_OUTAGE_MS = 2000;

export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly namespace = 'idempotency',
  ) {}

  private key(key: string): string {
    return `${this.prefix}${this.namespace}:${key}`;
  }

  async claim(key: string, value: string, ttlMs: number): Promise<string | null> {
    // SET NX then GET: a key that expired in between is simply claimed on the next round.
    const set = { expiration: { type: 'PX', value: ttlMs }, condition: 'NX' } as const;
    for (;;) {
      // node-redis never resends a command whose reply was lost: sent again here, after a
      // reconnection, it finds the key held by our own value if the first one was applied.
      const claimed = await outlastingOutage(
        () => this.redis.set(this.key(key), value, set),
        CLAIM_OUTAGE_MS,
      );
      if (claimed === 'OK') return null;
      const held = await outlastingOutage(() => this.redis.get(this.key(key)), CLAIM_OUTAGE_MS);
      // Our own value: a resent SET NX whose first reply was lost had already claimed the key.
      if (held === value) return null;
      if (held !== null) return held;
    }
  }

  async replace(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    const args = { keys: [this.key(key)], arguments: [expected, value, String(ttlMs)] };
    return (await this.redis.eval(REPLACE_IF, args)) === 1;
  }

  async release(key: string, expected: string): Promise<void> {
    await this.redis.eval(DELETE_IF, { keys: [this.key(key)], arguments: [expected] });
  }
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = expiringEntries<string>();

  private held(key: string): string | null {
    return this.entries.get(key) ?? null;
  }

  async claim(key: string, value: string, ttlMs: number): Promise<string | null> {
    const held = this.held(key);
    if (held !== null) return held;
    this.entries.set(key, value, { ttl: ttlMs });
    return null;
  }

  async replace(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.held(key) !== expected) return false;
    this.entries.set(key, value, { ttl: ttlMs });
    return true;
  }

  async release(key: string, expected: string): Promise<void> {
    if (this.held(key) === expected) this.entries.delete(key);
  }
}

export const createIdempotencyStore = (
  redis: RedisClient | undefined,
  prefix: string,
  namespace?: string,
): IdempotencyStore =>
  redis ? new RedisIdempotencyStore(redis, prefix, namespace) : new MemoryIdempotencyStore();
