// The EXECUTE cache of SPEC §12 PC-5: answers of EXECUTE references for 5 minutes under
// `prompt:execute:{promptId}:{hash}:depth{N}`, cleared when the prompt is saved, with hit/miss
// counters for GET /api/v1/cache/stats. Answers are content: stored encrypted (SPEC §17).
import { createHash } from 'node:crypto';
import { RESP_TYPES } from 'redis';
import type { RedisClient } from './redis-client';
import type { KeyRing } from './crypto';
import { expiringEntries } from './expiring-entries';

interface CachedAnswer {
  text: string;
  usage: { input_tokens: number; output_tokens: number };
  provider: string;
  model: string;
}

interface CacheStats {
  hits: number;
  misses: number;
  entries: number;
  hitRate: number;
}

/** hash = standard padded base64 of SHA-256 over the resolved prompt text, model and temperature. */
export function executeCacheHash(resolvedText: string, model: string, temperature: number | null): string {
  return createHash('sha256')
    .update(JSON.stringify([resolvedText, model, temperature]))
    .digest('base64');
}

export const executeCacheKey = (promptId: string, hash: string, depth: number): string =>
  `prompt:execute:${promptId}:${hash}:depth${depth}`;

export interface ExecuteCache {
  get(key: string): Promise<CachedAnswer | null>;
  set(key: string, value: CachedAnswer): Promise<void>;
  clearPrompt(promptId: string): Promise<void>;
  stats(): Promise<CacheStats>;
}

const statsOf = (hits: number, misses: number, entries: number): CacheStats => ({
  hits,
  misses,
  entries,
  hitRate: hits + misses === 0 ? 0 : hits / (hits + misses),
});

export class RedisExecuteCache implements ExecuteCache {
  private readonly statsKey: string;
  /** The same connection, replying with Buffers: answers are stored as raw ciphertext. */
  private readonly binary;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyring: KeyRing,
    private readonly ttlSeconds: number,
    private readonly prefix = '',
  ) {
    this.statsKey = `${prefix}prompt:execute-stats`;
    this.binary = redis.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  }

  async get(key: string): Promise<CachedAnswer | null> {
    const raw = await this.binary.get(this.prefix + key);
    await this.redis.hIncrBy(this.statsKey, raw ? 'hits' : 'misses', 1);
    return raw ? this.keyring.decryptJson<CachedAnswer>('content', raw) : null;
  }

  async set(key: string, value: CachedAnswer): Promise<void> {
    await this.redis.set(this.prefix + key, this.keyring.encryptJson('content', value), {
      expiration: { type: 'EX', value: this.ttlSeconds },
    });
  }

  private async keys(pattern: string): Promise<string[]> {
    const found: string[] = [];
    for await (const keys of this.redis.scanIterator({ MATCH: pattern, COUNT: 500 })) found.push(...keys);
    return found;
  }

  async clearPrompt(promptId: string): Promise<void> {
    const keys = await this.keys(`${this.prefix}prompt:execute:${promptId}:*`);
    if (keys.length > 0) await this.redis.del(keys);
  }

  async stats(): Promise<CacheStats> {
    const [counters, keys] = await Promise.all([
      this.redis.hGetAll(this.statsKey),
      this.keys(`${this.prefix}prompt:execute:*:depth*`),
    ]);
    return statsOf(Number(counters.hits ?? 0), Number(counters.misses ?? 0), keys.length);
  }
}

/** The embedded quick start's cache (no Redis): same contract, one process. */
export class MemoryExecuteCache implements ExecuteCache {
  private readonly entries = expiringEntries<Buffer>();
  private hits = 0;
  private misses = 0;

  constructor(
    private readonly keyring: KeyRing,
    private readonly ttlSeconds: number,
  ) {}

  async get(key: string): Promise<CachedAnswer | null> {
    const raw = this.entries.get(key);
    if (raw) this.hits++;
    else this.misses++;
    return raw ? this.keyring.decryptJson<CachedAnswer>('content', raw) : null;
  }

  async set(key: string, value: CachedAnswer): Promise<void> {
    this.entries.set(key, this.keyring.encryptJson('content', value), { ttl: this.ttlSeconds * 1000 });
  }

  async clearPrompt(promptId: string): Promise<void> {
    const prefix = `prompt:execute:${promptId}:`;
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  async stats(): Promise<CacheStats> {
    this.entries.purgeStale();
    return statsOf(this.hits, this.misses, this.entries.size);
  }
}
