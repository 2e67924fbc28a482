// SPEC §9.6 on a real Redis: waiting readers of many executions share one blocking connection,
// each gets exactly its own entries, a reader arriving while that connection is blocked is not
// kept waiting for the block period, and a stream's expiry follows its first and terminal events.
import { randomBytes, randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { KeyRing } from '../../infra/crypto';
import { createLogger } from '../../infra/logger';
import { watchConnection, type RedisClient } from '../../infra/redis-client';
import { RedisRelay } from '../../infra/redis-relay';
import { RELAY_START, RELAY_TTL_MS, relayKey } from '../../infra/relay';
import { REFRESH_MS } from '../../infra/relay-expiry';
import { LOOP_BLOCK_MS } from '../../infra/stream-multiplexer';
import { REDIS_URL } from '../helpers/services';
import { sleep, waitFor } from '../helpers/wait';

const keyring = new KeyRing('relay-integration-test-secret-0123456789');
const logger = createLogger('silent');
const name = `relay-test-${randomBytes(4).toString('hex')}`;
const prefix = `${name}:`;
let redis: RedisClient;
let relay: RedisRelay;

/** Connections of this test file's client and of the reader it duplicated. */
async function connections(): Promise<number> {
  const list = await redis.clientList();
  return list.filter((c) => c.name.startsWith(name)).length;
}

/** Waits until a connection of this file's relay is blocked in its shared XREAD. */
const xreadBlocking = () =>
  waitFor(async () => (await redis.clientList()).some((c) => c.name.startsWith(name) && c.cmd === 'xread'), {
    what: 'the shared XREAD to block',
  });

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

describe('§9.6 relay readers share one blocking connection', () => {
  it('§9.6: 32 readers of 32 executions wait on one connection and each gets exactly its own event', async () => {
    const ids = Array.from({ length: 32 }, () => randomUUID());
    const reads = ids.map((id) => relay.read(id, RELAY_START, 5000));
    await xreadBlocking();
    // The shared client and one blocking reader, not one connection per waiting reader.
    expect(await connections()).toBe(2);
    await Promise.all(ids.map((id, n) => relay.publish(id, { type: 'delta', attempt: 1, text: `t${n}` })));
    const results = await Promise.all(reads);
    expect(results.map((entries) => entries.map((e) => e.event))).toEqual(
      ids.map((_, n) => [{ type: 'delta', attempt: 1, text: `t${n}` }]),
    );
  });

  it('§9.6: a reader arriving while the shared XREAD blocks on other streams gets its event without waiting a block period', async () => {
    const idle = relay.read(randomUUID(), RELAY_START, 1500);
    await xreadBlocking();
    const late = randomUUID();
    const blockPeriodOver = sleep(LOOP_BLOCK_MS).then(() => 'block period over');
    const read = relay.read(late, RELAY_START, 3000);
    await relay.publish(late, { type: 'start', attempt: 1 });
    // Served before the shared XREAD's block period could have run out on its own: the reader
    // was woken (CLIENT UNBLOCK), not picked up by the next loop.
    expect(await Promise.race([read.then(() => 'served'), blockPeriodOver])).toBe('served');
    expect((await read).map((e) => e.event.type)).toEqual(['start']);
    await idle;
  });

  it('§9.6: two readers of one stream at different positions each get what follows their own position', async () => {
    const id = randomUUID();
    const first = await relay.publish(id, { type: 'start', attempt: 1 });
    const [fromStart, fromFirst] = [relay.read(id, RELAY_START, 2000), relay.read(id, first, 2000)];
    expect((await fromStart).map((e) => e.id)).toEqual([first]);
    const next = relay.read(id, first, 2000);
    const second = await relay.publish(id, { type: 'delta', attempt: 1, text: 'a' });
    expect((await fromFirst).map((e) => e.id)).toEqual([second]);
    expect((await next).map((e) => e.id)).toEqual([second]);
  });

  it('§9.6: a reader with nothing to read gets [] after its wait; a closed relay ends waiting reads', async () => {
    const started = Date.now();
    expect(await relay.read(randomUUID(), RELAY_START, 150)).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);

    const other = new RedisRelay(redis, keyring, prefix, logger);
    const waiting = other.read(randomUUID(), RELAY_START, 10_000);
    await sleep(50);
    await other.close();
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
