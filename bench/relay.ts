// `npm run bench -- relay`: the product's relay (infra/redis-relay.ts) on a real Redis, Redis only
// (no API, worker or database). BENCH_RELAY_READERS executions (default 1000) stream
// BENCH_RELAY_EVENTS deltas each (default 50), one every BENCH_RELAY_DELTA_MS (default 100), each
// followed by one reader as the API follows it (a feed per reader, `next` with a 1 s wait), the
// readers in one relay and the publishers in another (an API and a worker). Reports the reading
// side's connections at peak, publish → read latency p50 / p95 / p99, and the CPU of this process
// per event (publishing and reading together; the relay-transport benchmark has Redis's own).
import { randomBytes, randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { KeyRing } from '../infra/crypto';
import { createLogger } from '../infra/logger';
import { watchConnection, type RedisClient } from '../infra/redis-client';
import { RedisRelay } from '../infra/redis-relay';
import { RELAY_START } from '../infra/relay';
import { envInt, log, nowMs, REDIS_URL } from './lib/env';
import { machine, percentile, printTable, round, writeResults } from './lib/report';

const READERS = envInt('BENCH_RELAY_READERS', 1000);
const EVENTS = envInt('BENCH_RELAY_EVENTS', 50);
const DELTA_MS = envInt('BENCH_RELAY_DELTA_MS', 100, 0);
const READ_BLOCK_MS = 1000; // api/execution-response.ts

const keyring = new KeyRing(randomBytes(32).toString('hex'));
const logger = createLogger('warn');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(name: string): Promise<RedisClient> {
  const client: RedisClient = createClient({ url: REDIS_URL, name, disableOfflineQueue: true });
  await watchConnection(client, logger, name).connect();
  return client;
}

async function main(): Promise<void> {
  log(`relay: ${READERS} readers × ${EVENTS} deltas every ${DELTA_MS} ms`);
  const name = `bench-relay-${randomBytes(3).toString('hex')}`;
  const prefix = `${name}:`;
  const [readerClient, publisherClient] = [await connect(name), await connect(`${name}-publisher`)];
  const readers = new RedisRelay(readerClient, keyring, prefix, logger);
  const publisher = new RedisRelay(publisherClient, keyring, prefix, logger);
  let peakConnections = 0;
  const sampling = setInterval(() => {
    void publisherClient.clientList().then((list) => {
      const mine = list.filter((c) => c.name === name || c.name.startsWith(`${name}:`)).length;
      peakConnections = Math.max(peakConnections, mine);
    });
  }, 100);
  const latenciesMs: number[] = [];
  const ids = Array.from({ length: READERS }, () => randomUUID());
  const readAll = async (id: string): Promise<void> => {
    const feed = readers.follow(id, RELAY_START);
    try {
      for (let seen = 0; seen < EVENTS;) {
        const entries = await feed.next(READ_BLOCK_MS);
        const at = nowMs();
        for (const { event } of entries)
          if (event.type === 'delta') latenciesMs.push(at - Number(event.text));
        seen += entries.length;
      }
    } finally {
      feed.close();
    }
  };
  const publishAll = async (id: string, offsetMs: number): Promise<void> => {
    await sleep(offsetMs);
    for (let n = 1; n <= EVENTS; n++) {
      await publisher.publish(id, { type: 'delta', attempt: 1, text: String(nowMs()), n });
      if (DELTA_MS > 0) await sleep(DELTA_MS);
    }
  };
  const cpuBefore = process.cpuUsage();
  const started = nowMs();
  try {
    await Promise.all([
      ...ids.map((id) => readAll(id)),
      ...ids.map((id, i) => publishAll(id, 500 + ((i * 7) % Math.max(1, DELTA_MS)))),
    ]);
  } finally {
    clearInterval(sampling);
    await readers.close();
    await publisher.close();
    for await (const keys of readerClient.scanIterator({ MATCH: `${prefix}*` }))
      if (keys.length > 0) await readerClient.del(keys);
    await Promise.all([readerClient.close(), publisherClient.close()]);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const events = READERS * EVENTS;
  const figures = [
    { figure: 'reading connections at peak (shared client + subscriber)', value: peakConnections, unit: '' },
    ...[50, 95, 99].map((p) => ({
      figure: `publish → read p${p}`,
      value: round(percentile(latenciesMs, p)),
      unit: 'ms',
    })),
    {
      figure: 'this process CPU per event (publish + read)',
      value: round((cpu.user + cpu.system) / 1000 / events, 3),
      unit: 'ms',
    },
    { figure: 'run time', value: round((nowMs() - started) / 1000, 1), unit: 's' },
  ];
  printTable(`relay readers (${READERS} executions, ${EVENTS} deltas each, every ${DELTA_MS} ms)`, figures);
  writeResults('relay', { machine: machine(), readers: READERS, events: EVENTS, deltaMs: DELTA_MS, figures });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
