// Execution traces (SPEC §11, TR-1..4): encrypted, with a TTL from the execution, readable only by
// the API key that ran it. Redis in production, in-process for the quick start.
import { answered, type RedisClient } from './redis-client';
import type { KeyRing } from './crypto';
import { expiringEntries } from './expiring-entries';

export interface TraceStore {
  put(traceId: string, ownerKeyId: string, trace: unknown, ttlSeconds: number): Promise<void>;
  /** The trace, or null when it is unknown, expired or belongs to another key. */
  get(traceId: string, keyId: string): Promise<unknown>;
}

interface Envelope {
  owner: string;
  trace: unknown;
}

export class RedisTraceStore implements TraceStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyring: KeyRing,
    private readonly prefix: string,
  ) {}

  private key(traceId: string): string {
    return `${this.prefix}trace:${traceId}`;
  }

  async put(traceId: string, ownerKeyId: string, trace: unknown, ttlSeconds: number): Promise<void> {
    const envelope: Envelope = { owner: ownerKeyId, trace };
    const value = this.keyring.encryptJson('trace', envelope).toString('base64');
    await answered(
      this.redis.set(this.key(traceId), value, { expiration: { type: 'EX', value: ttlSeconds } }),
    );
  }

  async get(traceId: string, keyId: string): Promise<unknown> {
    const raw = await answered(this.redis.get(this.key(traceId)));
    if (!raw) return null;
    const envelope = this.keyring.decryptJson<Envelope>('trace', Buffer.from(raw, 'base64'));
    return envelope.owner === keyId ? envelope.trace : null;
  }
}

export class MemoryTraceStore implements TraceStore {
  private readonly entries = expiringEntries<Buffer>();

  constructor(private readonly keyring: KeyRing) {}

  async put(traceId: string, ownerKeyId: string, trace: unknown, ttlSeconds: number): Promise<void> {
    this.entries.set(traceId, this.keyring.encryptJson('trace', { owner: ownerKeyId, trace }), {
      ttl: ttlSeconds * 1000,
    });
  }

  async get(traceId: string, keyId: string): Promise<unknown> {
    const data = this.entries.get(traceId);
    if (!data) return null;
    const envelope = this.keyring.decryptJson<Envelope>('trace', data);
    return envelope.owner === keyId ? envelope.trace : null;
  }
}
