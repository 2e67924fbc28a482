// §9.6: the Redis relay outlasts a Redis outage (a restart) without losing or duplicating an
// event. Against a stub Redis whose replies can be lost after the command was applied, which a
// real restart does only by chance (test/reliability/redis-restart.test.ts restarts a real one).
import type { Redis } from 'ioredis';
import { KeyRing } from '../../infra/crypto';
import { RedisRelay, RELAY_START } from '../../infra/relay';

type Fault = 'refused' | 'reply-lost';

/** An in-memory Redis stream with scripted connection faults for the next calls. */
class FlakyRedis {
  entries: [string, string[]][] = [];
  faults: Fault[] = [];
  calls = 0;
  private counter = 0;

  private fault(): Fault | undefined {
    this.calls++;
    return this.faults.shift();
  }

  multi() {
    const ops: { data?: string } = {};
    const chain = {
      xadd: (_key: string, _id: string, _field: string, data: string) => ((ops.data = data), chain),
      pexpire: () => chain,
      exec: async () => {
        const fault = this.fault();
        if (fault === 'refused') throw new Error('Connection is closed.');
        const id = `${Date.now()}-${this.counter++}`;
        this.entries.push([id, ['d', ops.data!]]);
        if (fault === 'reply-lost') throw new Error('Reached the max retries per request limit');
        return [
          [null, id],
          [null, 1],
        ];
      },
    };
    return chain;
  }

  async xrevrange(): Promise<[string, string[]][]> {
    if (this.fault() === 'refused') throw new Error('Connection is closed.');
    return [...this.entries].reverse();
  }

  async xread(...args: unknown[]): Promise<unknown> {
    if (this.fault() === 'refused') throw new Error('Connection is closed.');
    const after = String(args[args.length - 1]);
    const found = this.entries.filter(([id]) => after === RELAY_START || id > after);
    return found.length > 0 ? [['key', found]] : null;
  }

  duplicate(): this {
    return this;
  }

  disconnect(): void {}
}

const keyring = new KeyRing('relay-outage-test-secret-0123456789abcdef');
const relayOn = (redis: FlakyRedis, toleranceMs = 5000): RedisRelay =>
  new RedisRelay(redis as unknown as Redis, keyring, 'test:', toleranceMs);

describe('§9.6 relay during a Redis outage', () => {
  it('§9.6: an append whose reply was lost is found on retry, not appended twice; the reader sees it once', async () => {
    const redis = new FlakyRedis();
    const relay = relayOn(redis);
    redis.faults = ['reply-lost'];
    const id = await relay.publish('e1', { type: 'delta', attempt: 1, text: 'once' });
    expect(redis.entries.map(([entryId]) => entryId)).toEqual([id]);
    const read = await relay.read('e1', RELAY_START, 0);
    expect(read.map((e) => e.event)).toEqual([{ type: 'delta', attempt: 1, text: 'once' }]);
  });

  it('§9.6: appends and reads refused while Redis is down are retried until it is back, in order', async () => {
    const redis = new FlakyRedis();
    const relay = relayOn(redis);
    redis.faults = ['refused', 'refused', 'refused'];
    await relay.publish('e1', { type: 'start', attempt: 1 });
    await relay.publish('e1', { type: 'delta', attempt: 1, text: 'a' });
    redis.faults = ['refused', 'refused'];
    const read = await relay.read('e1', RELAY_START, 0);
    expect(read.map((e) => e.event.type)).toEqual(['start', 'delta']);
  });

  it('§9.6: a command Redis refuses (a reply error) fails at once; an outage longer than the tolerance fails', async () => {
    const redis = new FlakyRedis();
    const wrongType = Object.assign(new Error('WRONGTYPE Operation against a key'), { name: 'ReplyError' });
    redis.multi = () => {
      throw wrongType;
    };
    await expect(relayOn(redis).publish('e1', { type: 'start', attempt: 1 })).rejects.toBe(wrongType);

    const down = new FlakyRedis();
    down.faults = Array<Fault>(1000).fill('refused');
    await expect(relayOn(down, 300).read('e1', RELAY_START, 0)).rejects.toThrow('Connection is closed.');
    expect(down.calls).toBeGreaterThan(1);
  });
});
