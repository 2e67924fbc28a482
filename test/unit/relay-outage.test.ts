// §9.6: the Redis relay outlasts a Redis outage (a restart) without losing or duplicating an
// event, and sets a stream's expiry only when it has to. Against a stub of the node-redis client
// whose replies can be lost after the command was applied, which a real restart does only by
// chance (test/reliability/redis-restart.test.ts restarts a real one). The errors are node-redis's
// own classes, as the client throws them.
import { ClientOfflineError, ErrorReply, SocketClosedUnexpectedlyError } from 'redis';
import { KeyRing } from '../../infra/crypto';
import { createLogger } from '../../infra/logger';
import type { RedisClient } from '../../infra/redis-client';
import { RedisRelay } from '../../infra/redis-relay';
import { RELAY_START, RELAY_TTL_MS } from '../../infra/relay';
import { REFRESH_MS } from '../../infra/relay-expiry';

type Fault = 'offline' | 'reply-lost';
type Entry = { id: string; message: { d: string } };

/** An in-memory Redis stream with scripted connection faults for the next calls. */
class FlakyRedis {
  entries: Entry[] = [];
  faults: Fault[] = [];
  calls = 0;
  expiries: number[] = [];
  private counter = 0;

  private fault(): Fault | undefined {
    this.calls++;
    return this.faults.shift();
  }

  private append(data: string): string {
    const id = `${Date.now()}-${this.counter++}`;
    this.entries.push({ id, message: { d: data } });
    return id;
  }

  /** The relay's append script: XADD, PEXPIRE when its expiry is not 0, PUBLISH (no subscriber here). */
  async evalSha(_sha: string, options: { keys: string[]; arguments: string[] }): Promise<string> {
    const fault = this.fault();
    if (fault === 'offline') throw new ClientOfflineError();
    const [data, ttl] = options.arguments as [string, string];
    const id = this.append(data);
    if (ttl !== '0') this.expiries.push(Number(ttl));
    if (fault === 'reply-lost') throw new SocketClosedUnexpectedlyError();
    return id;
  }

  async xRevRange(): Promise<Entry[]> {
    if (this.fault() === 'offline') throw new ClientOfflineError();
    return [...this.entries].reverse();
  }

  async xRead(stream: { key: string; id: string }): Promise<unknown> {
    if (this.fault() === 'offline') throw new ClientOfflineError();
    const found = this.entries.filter(({ id }) => stream.id === RELAY_START || id > stream.id);
    return found.length > 0 ? [{ name: stream.key, messages: found }] : null;
  }
}

const keyring = new KeyRing('relay-outage-test-secret-0123456789abcdef');
const logger = createLogger('silent');
const relayOn = (redis: FlakyRedis, toleranceMs = 5000): RedisRelay =>
  new RedisRelay(redis as unknown as RedisClient, keyring, 'test:', logger, toleranceMs);

describe('§9.6 relay during a Redis outage', () => {
  it('§9.6: an append whose reply was lost is found on retry, not appended twice; the reader sees it once', async () => {
    const redis = new FlakyRedis();
    const relay = relayOn(redis);
    redis.faults = ['reply-lost'];
    const id = await relay.publish('e1', { type: 'delta', attempt: 1, text: 'once' });
    expect(redis.entries.map((e) => e.id)).toEqual([id]);
    const read = await relay.read('e1', RELAY_START);
    expect(read.map((e) => e.event)).toEqual([{ type: 'delta', attempt: 1, text: 'once' }]);
  });

  it('§9.6: appends and reads refused while the client is offline are retried until it is back, in order', async () => {
    const redis = new FlakyRedis();
    const relay = relayOn(redis);
    redis.faults = ['offline', 'offline', 'offline'];
    await relay.publish('e1', { type: 'start', attempt: 1 });
    await relay.publish('e1', { type: 'delta', attempt: 1, text: 'a' });
    redis.faults = ['offline', 'offline'];
    const read = await relay.read('e1', RELAY_START);
    expect(read.map((e) => e.event.type)).toEqual(['start', 'delta']);
  });

  it('§9.6: a command Redis refuses (an ErrorReply) or a bug fails at once; an outage longer than the tolerance fails', async () => {
    for (const refusal of [new ErrorReply('WRONGTYPE Operation against a key'), new TypeError('bug')]) {
      const redis = new FlakyRedis();
      redis.evalSha = () => Promise.reject(refusal);
      await expect(relayOn(redis).publish('e1', { type: 'start', attempt: 1 })).rejects.toBe(refusal);
    }

    const down = new FlakyRedis();
    down.faults = Array<Fault>(1000).fill('offline');
    await expect(relayOn(down, 300).read('e1', RELAY_START)).rejects.toBeInstanceOf(ClientOfflineError);
    expect(down.calls).toBeGreaterThan(1);
  });

  it('§9.6: a loading Redis (LOADING reply after a restart) is waited for like an outage', async () => {
    const redis = new FlakyRedis();
    const append = redis.evalSha.bind(redis);
    let loading = 2;
    redis.evalSha = async (...args) => {
      if (loading-- > 0) throw new ErrorReply('LOADING Redis is loading the dataset in memory');
      return append(...args);
    };
    const relay = relayOn(redis);
    await relay.publish('e1', { type: 'start', attempt: 1 });
    await relay.publish('e1', { type: 'delta', attempt: 1, text: 'a' });
    expect(redis.entries).toHaveLength(2);
  });
});

describe('§9.6 relay stream expiry', () => {
  it('§9.6: the expiry is set with the first event and the terminal one, not with every delta', async () => {
    const redis = new FlakyRedis();
    const relay = relayOn(redis);
    await relay.publish('e1', { type: 'start', attempt: 1 });
    for (let n = 1; n <= 5; n++) await relay.publish('e1', { type: 'delta', attempt: 1, text: 'x', n });
    await relay.publish('e1', { type: 'done', attempt: 1, usage: { input_tokens: 1, output_tokens: 5 } });
    // First event: 1 h plus the refresh period, so that any later event is ≥ 1 h from expiry.
    expect(redis.expiries).toEqual([RELAY_TTL_MS + REFRESH_MS, RELAY_TTL_MS]);
    expect(redis.entries).toHaveLength(7);

    await relay.publish('e2', { type: 'error', status: 499, detail: 'cancelled' });
    expect(redis.expiries).toEqual([RELAY_TTL_MS + REFRESH_MS, RELAY_TTL_MS, RELAY_TTL_MS]);
  });

  it('§9.6: a stream that outlives the refresh period gets its expiry set again; a failed publish does not count as set', async () => {
    jest.useFakeTimers({ now: Date.now(), doNotFake: ['setImmediate', 'nextTick'] });
    try {
      const redis = new FlakyRedis();
      const relay = relayOn(redis, 0);
      redis.faults = ['offline'];
      await expect(relay.publish('e1', { type: 'start', attempt: 1 })).rejects.toBeInstanceOf(
        ClientOfflineError,
      );
      await relay.publish('e1', { type: 'delta', attempt: 1, text: 'a', n: 1 });
      await relay.publish('e1', { type: 'delta', attempt: 1, text: 'b', n: 2 });
      expect(redis.expiries).toHaveLength(1);
      jest.setSystemTime(Date.now() + REFRESH_MS);
      await relay.publish('e1', { type: 'delta', attempt: 1, text: 'c', n: 3 });
      expect(redis.expiries).toEqual([RELAY_TTL_MS + REFRESH_MS, RELAY_TTL_MS + REFRESH_MS]);
    } finally {
      jest.useRealTimers();
    }
  });
});
