// SPEC §9.6 on a real Redis: readers of many executions share one pub/sub connection, a new
// reader costs one SUBSCRIBE whatever the number of open streams, each gets exactly its own
// entries once and in order (what was stored before it came, then what follows), an entry missed
// on the channel or during a reconnection is read from the stream, and a stream's expiry follows
// its first and terminal events.
import { randomBytes, randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { KeyRing } from '../../infra/crypto';
import { createLogger } from '../../infra/logger';
import { watchConnection, type RedisClient } from '../../infra/redis-client';
import { RedisRelay } from '../../infra/redis-relay';
import { RELAY_START, RELAY_TTL_MS, relayKey, type RelayFeed } from '../../infra/relay';
import { REFRESH_MS } from '../../infra/relay-expiry';
import { REDIS_URL } from '../helpers/services';
import { sleep, waitFor } from '../helpers/wait';

const keyring = new KeyRing('relay-integration-test-secret-0123456789');
const logger = createLogger('silent');
const name = `relay-test-${randomBytes(4).toString('hex')}`;
const prefix = `${name}:`;
let redis: RedisClient;
let relay: RedisRelay;

/** Connections of this test file's client and of the subscriber it duplicated. */
async function connections(): Promise<number> {
  const list = await redis.clientList();
  return list.filter((c) => c.name.startsWith(name)).length;
}

/** Channels of this file subscribed on the server. */
async function channels(): Promise<number> {
  return ((await redis.sendCommand(['PUBSUB', 'CHANNELS', `${prefix}*`])) as string[]).length;
}

/** Everything a feed yields until `count` entries arrived. */
async function collect(feed: RelayFeed, count: number) {
  const got = [];
  while (got.length < count) {
    const entries = await feed.next(5000);
    if (entries.length === 0) throw new Error(`only ${got.length} of ${count} entries`);
    got.push(...entries);
  }
  return got;
}

const delta = (text: string, n: number) => ({ type: 'delta' as const, attempt: 1, text, n });

beforeAll(async () => {
  redis = createClient({ url: REDIS_URL, name, disableOfflineQueue: true });
  await watchConnection(redis, logger, 'test').connect();
  relay = new RedisRelay(redis, keyring, prefix, logger);
});

afterAll(async () => {
  await relay.close();
  const keys: string[] = [];
  for await (const batch of redis.scanIterator({ MATCH: `${prefix}*` })) keys.push(...batch);
  if (keys.length > 0) await redis.del(keys);
  await redis.close();
});

describe('§9.6 relay readers share one subscription connection', () => {
  it('§9.6: 300 readers of 300 executions share one connection, cost one SUBSCRIBE each, and each gets exactly its own entries in order', async () => {
    const stats = async () =>
      Number(/cmdstat_subscribe:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
    const before = await stats();
    const ids = Array.from({ length: 300 }, () => randomUUID());
    const feeds = ids.map((id) => relay.follow(id, RELAY_START));
    await waitFor(async () => (await channels()) === 300, { what: '300 subscribed channels' });
    // The shared client and one subscriber, not a connection per reader; one SUBSCRIBE per reader.
    expect(await connections()).toBe(2);
    expect((await stats()) - before).toBe(300);
    for (let n = 1; n <= 3; n++)
      await Promise.all(ids.map((id, i) => relay.publish(id, delta(`${i}:${n}`, n))));
    const got = await Promise.all(feeds.map((feed) => collect(feed, 3)));
    expect(got.map((entries) => entries.map((e) => e.event))).toEqual(
      ids.map((_, i) => [1, 2, 3].map((n) => delta(`${i}:${n}`, n))),
    );
    for (const feed of feeds) feed.close();
    await waitFor(async () => (await channels()) === 0, { what: 'the channels unsubscribed' });
  });

  it('§9.6: a reader following an execution late gets what was stored, then what follows, each once', async () => {
    const id = randomUUID();
    const first = await relay.publish(id, { type: 'start', attempt: 1 });
    await relay.publish(id, delta('a', 1));
    const fromStart = relay.follow(id, RELAY_START);
    const fromFirst = relay.follow(id, first);
    const third = relay.publish(id, delta('b', 2));
    const texts = (entries: { event: { type: string; text?: string } }[]) =>
      entries.map((e) => e.event.text ?? e.event.type);
    expect(texts(await collect(fromStart, 3))).toEqual(['start', 'a', 'b']);
    expect(texts(await collect(fromFirst, 2))).toEqual(['a', 'b']);
    expect((await fromStart.next(200)).length + (await fromFirst.next(200)).length).toBe(0);
    expect(await third).toBeDefined();
    fromStart.close();
    fromFirst.close();
  });

  it('§9.6: an entry appended without its message (missed on the channel) is read from the stream when the next message shows the gap', async () => {
    const id = randomUUID();
    const feed = relay.follow(id, RELAY_START);
    await waitFor(async () => (await channels()) >= 1, { what: 'the subscription' });
    await relay.publish(id, delta('a', 1));
    expect((await collect(feed, 1)).map((e) => e.event)).toEqual([delta('a', 1)]);
    // Stored, never published: as if the subscriber connection had missed the message.
    await redis.xAdd(relayKey(prefix, id), '*', {
      d: keyring.encryptJson('relay', delta('b', 2)).toString('base64'),
    });
    await relay.publish(id, delta('c', 3));
    expect((await collect(feed, 2)).map((e) => e.event)).toEqual([delta('b', 2), delta('c', 3)]);
    feed.close();
  });

  it('§9.6: the subscriber connection killed while entries flow: after it reconnects the reader has every entry once, in order', async () => {
    const id = randomUUID();
    const feed = relay.follow(id, RELAY_START);
    await waitFor(async () => (await channels()) >= 1, { what: 'the subscription' });
    const publishing = (async () => {
      for (let n = 1; n <= 40; n++) {
        await relay.publish(id, delta(String(n), n));
        await sleep(10);
      }
    })();
    await sleep(100);
    const subscriber = (await redis.clientList()).find((c) => c.name === `${name}:subscriber`);
    await redis.sendCommand(['CLIENT', 'KILL', 'ID', String(subscriber!.id)]);
    await publishing;
    const got = await collect(feed, 40);
    expect(got.map((e) => e.event)).toEqual(
      Array.from({ length: 40 }, (_, i) => delta(String(i + 1), i + 1)),
    );
    expect(await feed.next(300)).toEqual([]);
    feed.close();
  });

  it('§9.6: a reader that leaves before its subscription is confirmed does not unsubscribe the reader that re-attached meanwhile', async () => {
    const id = randomUUID();
    relay.follow(id, RELAY_START).close();
    const reattached = relay.follow(id, RELAY_START);
    // Subscribed and caught up (nothing stored yet), and the first reader's leaving has settled.
    expect(await reattached.next(300)).toEqual([]);
    expect(await channels()).toBe(1);
    for (let n = 1; n <= 3; n++) await relay.publish(id, delta(String(n), n));
    expect((await collect(reattached, 3)).map((e) => e.event)).toEqual(
      [1, 2, 3].map((n) => delta(String(n), n)),
    );
    reattached.close();
    await waitFor(async () => (await channels()) === 0, { what: 'the channel to be unsubscribed' });
  });

  it('§9.6: a reader with nothing to read gets [] after its wait; closing a feed ends its waiting read', async () => {
    const idle = relay.follow(randomUUID(), RELAY_START);
    const started = Date.now();
    expect(await idle.next(150)).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const waiting = idle.next(10_000);
    await sleep(50);
    idle.close();
    expect(await waiting).toEqual([]);
  });
});

describe('§9.6 relay stream expiry on Redis', () => {
  it('§9.6: the first event sets 1 h plus the refresh period, deltas leave it, the terminal event sets 1 h', async () => {
    const id = randomUUID();
    const key = relayKey(prefix, id);
    await relay.publish(id, { type: 'start', attempt: 1 });
    const afterFirst = await redis.pTTL(key);
    expect(afterFirst).toBeGreaterThan(RELAY_TTL_MS + REFRESH_MS - 60_000);
    await redis.pExpire(key, RELAY_TTL_MS + REFRESH_MS + 5000);
    await relay.publish(id, { type: 'delta', attempt: 1, text: 'a', n: 1 });
    // Untouched by the delta: still the value set just above.
    expect(await redis.pTTL(key)).toBeGreaterThan(RELAY_TTL_MS + REFRESH_MS);
    await relay.publish(id, { type: 'done', attempt: 1, usage: { input_tokens: 1, output_tokens: 1 } });
    const afterDone = await redis.pTTL(key);
    expect(afterDone).toBeLessThanOrEqual(RELAY_TTL_MS);
    expect(afterDone).toBeGreaterThan(RELAY_TTL_MS - 60_000);
  });
});
