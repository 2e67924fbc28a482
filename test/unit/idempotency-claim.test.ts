// DX-4: an Idempotency-Key claim (SET NX) survives a connection lost after Redis applied it.
// node-redis never resends a command whose reply was lost, so the store sends it again itself;
// against a stub of the node-redis client that applies the SET and then drops the reply.
import { ClientOfflineError, ErrorReply, SocketClosedUnexpectedlyError } from 'redis';
import { RedisIdempotencyStore } from '../../infra/idempotency-store';
import type { RedisClient } from '../../infra/redis-client';

type Fault = 'offline' | 'reply-lost' | 'refused';

class FlakyRedis {
  values = new Map<string, string>();
  faults: Fault[] = [];
  sets = 0;

  private fail(): Fault | undefined {
    const fault = this.faults.shift();
    if (fault === 'offline') throw new ClientOfflineError();
    if (fault === 'refused') throw new ErrorReply('NOPERM this user has no permissions');
    return fault;
  }

  async set(key: string, value: string, options: { condition?: string }): Promise<'OK' | null> {
    const fault = this.fail();
    this.sets++;
    const applied = options.condition !== 'NX' || !this.values.has(key);
    if (applied) this.values.set(key, value);
    if (fault === 'reply-lost') throw new SocketClosedUnexpectedlyError();
    return applied ? 'OK' : null;
  }

  async get(key: string): Promise<string | null> {
    this.fail();
    return this.values.get(key) ?? null;
  }
}

const storeOn = (redis: FlakyRedis): RedisIdempotencyStore =>
  new RedisIdempotencyStore(redis as unknown as RedisClient, 'test:');

describe('DX-4 idempotency claims across a lost connection', () => {
  it('DX-4: a SET NX applied before its reply was lost is sent again after the reconnection and counts as claimed', async () => {
    const redis = new FlakyRedis();
    redis.faults = ['reply-lost', 'offline', 'offline'];
    expect(await storeOn(redis).claim('k', 'mine', 60_000)).toBeNull();
    expect(redis.values.get('test:idempotency:k')).toBe('mine');
    expect(redis.sets).toBe(2);
  });

  it('DX-4: a key another request holds is reported as held, not claimed', async () => {
    const redis = new FlakyRedis();
    redis.values.set('test:idempotency:k', 'theirs');
    redis.faults = ['offline'];
    expect(await storeOn(redis).claim('k', 'mine', 60_000)).toBe('theirs');
  });

  it('DX-4: a command Redis refuses fails at once', async () => {
    const redis = new FlakyRedis();
    redis.faults = ['refused'];
    await expect(storeOn(redis).claim('k', 'mine', 60_000)).rejects.toBeInstanceOf(ErrorReply);
    expect(redis.sets).toBe(0);
  });
});
