// Idempotency keys (SPEC §15 DX-4): one small value per key with an expiry, claimed atomically so
// that two concurrent requests with the same key start one execution. Redis (SET NX, and Lua
// compare-and-set / compare-and-delete) in production; an in-process map for the quick start.
// The same claims, in their own namespace, say which attempt streams an execution's answer
// (activities/model-stream-claim.ts).
//
// A claim may hold a lease: a second key that expires after a short time unless its holder renews
// it. Whether a lease lapsed is decided by Redis's own expiry (PX), never by comparing a time one
// process wrote with another's clock: replicas' clocks differ by seconds (issue 33).
import { expiringEntries } from './expiring-entries';
import { answered, outlastingOutage, type RedisClient } from './redis-client';

export interface IdempotencyStore {
  /**
   * Stores `value` under `key` unless the key is held: null when claimed, else the value held.
   * With `leaseMs`, the claim holds a lease that lapses after it unless renewed.
   */
  claim(key: string, value: string, ttlMs: number, leaseMs?: number): Promise<string | null>;
  /** Replaces the value of a key that still holds `expected` (with a new expiry, no lease); false otherwise. */
  replace(key: string, expected: string, value: string, ttlMs: number): Promise<boolean>;
  /** Deletes the key (and its lease) if it still holds `expected`: whether it did. */
  release(key: string, expected: string): Promise<boolean>;
}

/** Claims whose holder keeps them by renewing their lease (api/idempotency.ts). */
export interface LeasedIdempotencyStore extends IdempotencyStore {
  /** Extends the lease of a key that still holds `expected`; false when it lapsed or was taken. */
  renewLease(key: string, expected: string, leaseMs: number): Promise<boolean>;
  /** Replaces `expected` by `value` under a new lease only if the lease of `expected` has lapsed. */
  takeOver(key: string, expected: string, value: string, ttlMs: number, leaseMs: number): Promise<boolean>;
}

const CLAIM_LEASED = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3]) return 1 end return redis.call('GET', KEYS[1])`;
const REPLACE_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) redis.call('DEL', KEYS[2]) return 1 end return 0`;
const DELETE_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1], KEYS[2]) end return 0`;
const RENEW_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[2], ARGV[2]) end return 0`;
const TAKE_OVER_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
  return 1 end return 0`;

const CLAIMED = Symbol('claimed');

/** A claim outlasts a dropped connection (a reconnect takes well under a second), not an outage. */
const CLAIM_OUTAGE_MS = 2000;

export class RedisIdempotencyStore implements LeasedIdempotencyStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly namespace = 'idempotency',
  ) {}

  /** The key's value and its lease, side by side. */
  private keys(key: string): [string, string] {
    const name = `${this.prefix}${this.namespace}:${key}`;
    return [name, `${name}:lease`];
  }

  async claim(key: string, value: string, ttlMs: number, leaseMs?: number): Promise<string | null> {
    for (;;) {
      // node-redis never resends a command whose reply was lost: sent again here, after a
      // reconnection, it finds the key held by our own value if the first one was applied.
      const held = await outlastingOutage(() => this.claimOnce(key, value, ttlMs, leaseMs), CLAIM_OUTAGE_MS);
      // Our own value: a resent claim whose first reply was lost had already claimed the key.
      if (held === CLAIMED || held === value) return null;
      if (held !== null) return held;
      // The key expired between SET NX and GET: claimed on the next round.
    }
  }

  /** CLAIMED, or the value held (null when it expired meanwhile). */
  private async claimOnce(key: string, value: string, ttlMs: number, leaseMs?: number) {
    const [name, lease] = this.keys(key);
    if (leaseMs !== undefined) {
      const args = { keys: [name, lease], arguments: [value, String(ttlMs), String(leaseMs)] };
      const reply = (await this.redis.eval(CLAIM_LEASED, args)) as string | number;
      return typeof reply === 'number' ? CLAIMED : reply;
    }
    const set = { expiration: { type: 'PX', value: ttlMs }, condition: 'NX' } as const;
    if ((await this.redis.set(name, value, set)) === 'OK') return CLAIMED;
    return this.redis.get(name);
  }

  async replace(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    return this.run(REPLACE_IF, key, [expected, value, String(ttlMs)]);
  }

  async release(key: string, expected: string): Promise<boolean> {
    return this.run(DELETE_IF, key, [expected]);
  }

  async renewLease(key: string, expected: string, leaseMs: number): Promise<boolean> {
    return this.run(RENEW_IF, key, [expected, String(leaseMs)]);
  }

  async takeOver(key: string, expected: string, value: string, ttlMs: number, leaseMs: number) {
    return this.run(TAKE_OVER_IF, key, [expected, value, String(ttlMs), String(leaseMs)]);
  }

  /** A script over the key and its lease that answers 1 (done) or 0. */
  private async run(script: string, key: string, args: string[]): Promise<boolean> {
    const reply = await answered(this.redis.eval(script, { keys: this.keys(key), arguments: args }));
    return (reply as number) > 0;
  }
}

export class MemoryIdempotencyStore implements LeasedIdempotencyStore {
  private readonly entries = expiringEntries<string>();
  private readonly leases = expiringEntries<true>();

  private held(key: string): string | null {
    return this.entries.get(key) ?? null;
  }

  async claim(key: string, value: string, ttlMs: number, leaseMs?: number): Promise<string | null> {
    const held = this.held(key);
    if (held !== null) return held;
    this.entries.set(key, value, { ttl: ttlMs });
    if (leaseMs !== undefined) this.leases.set(key, true, { ttl: leaseMs });
    return null;
  }

  async replace(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.held(key) !== expected) return false;
    this.entries.set(key, value, { ttl: ttlMs });
    this.leases.delete(key);
    return true;
  }

  async release(key: string, expected: string): Promise<boolean> {
    if (this.held(key) !== expected) return false;
    this.leases.delete(key);
    return this.entries.delete(key);
  }

  async renewLease(key: string, expected: string, leaseMs: number): Promise<boolean> {
    if (this.held(key) !== expected || !this.leases.get(key)) return false;
    this.leases.set(key, true, { ttl: leaseMs });
    return true;
  }

  async takeOver(key: string, expected: string, value: string, ttlMs: number, leaseMs: number) {
    if (this.held(key) !== expected || this.leases.get(key)) return false;
    this.entries.set(key, value, { ttl: ttlMs });
    this.leases.set(key, true, { ttl: leaseMs });
    return true;
  }
}

export const createIdempotencyStore = (
  redis: RedisClient | undefined,
  prefix: string,
  namespace?: string,
): LeasedIdempotencyStore =>
  redis ? new RedisIdempotencyStore(redis, prefix, namespace) : new MemoryIdempotencyStore();
