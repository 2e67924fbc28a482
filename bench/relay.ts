// `npm run bench -- relay`: the relay's readers on a real Redis (Redis only, no API or worker).
// BENCH_RELAY_READERS executions (default 32) stream BENCH_RELAY_EVENTS deltas each (default 50),
// one every BENCH_RELAY_DELTA_MS (default 10), while one reader per execution reads as the API
// does (read after its cursor, block up to 1 s). Reported for the product's reader (one blocking
// connection shared by all waiting readers, infra/stream-multiplexer.ts) and, as the baseline,
// the previous design (each waiting reader borrows its own connection for XREAD BLOCK):
// connections the readers' process holds at peak, and publish → read latency p50 / p95.
import { randomBytes, randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import type { RelayEvent } from '../domain/stream-events';
import { KeyRing } from '../infra/crypto';
import { createLogger } from '../infra/logger';
import { watchConnection, type RedisClient } from '../infra/redis-client';
import { RedisRelay } from '../infra/redis-relay';
import { RELAY_START, relayKey, type Relay, type RelayEntry } from '../infra/relay';
import { rawEntries } from '../infra/stream-multiplexer';
import { envInt, log, nowMs, REDIS_URL } from './lib/env';
import { machine, percentile, printTable, round, writeResults } from './lib/report';

const READERS = envInt('BENCH_RELAY_READERS', 32);
const EVENTS = envInt('BENCH_RELAY_EVENTS', 50);
const DELTA_MS = envInt('BENCH_RELAY_DELTA_MS', 10, 0);
const READ_BLOCK_MS = 1000; // api/execution-response.ts

const keyring = new KeyRing(randomBytes(32).toString('hex'));
const logger = createLogger('warn');

/** The previous design, for the baseline: a connection per waiting reader, up to 64 kept idle. */
class ConnectionPerReader implements Pick<Relay, 'read'> {
  private readonly idle: RedisClient[] = [];

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async read(executionId: string, afterId: string, blockMs: number): Promise<RelayEntry[]> {
    let conn = this.idle.pop();
    if (!conn) {
      conn = watchConnection(this.redis.duplicate(), logger, 'bench-reader');
      await conn.connect();
    }
    try {
      const reply = await conn.xRead(
        { key: relayKey(this.prefix, executionId), id: afterId },
        { BLOCK: blockMs },
      );
      return rawEntries(reply).flatMap(({ entries }) =>
        entries.map(({ id, data }) => ({
          id,
          event: keyring.decryptJson<RelayEvent>('relay', Buffer.from(data, 'base64')),
        })),
      );
    } finally {
      this.idle.push(conn);
    }
  }

  async close(): Promise<void> {
    for (const conn of this.idle.splice(0)) conn.destroy();
  }
}

async function connect(name: string): Promise<RedisClient> {
  const client: RedisClient = createClient({ url: REDIS_URL, name, disableOfflineQueue: true });
  await watchConnection(client, logger, name).connect();
  return client;
}

interface Result {
  peakConnections: number;
  latenciesMs: number[];
}

async function run(design: 'shared' | 'per-reader'): Promise<Result> {
  const name = `bench-relay-${design}-${randomBytes(3).toString('hex')}`;
  const prefix = `${name}:`;
  const [readerClient, publisherClient] = [await connect(name), await connect(`${name}-publisher`)];
  const publisher = new RedisRelay(publisherClient, keyring, prefix, logger);
  const reader =
    design === 'shared'
      ? new RedisRelay(readerClient, keyring, prefix, logger)
      : new ConnectionPerReader(readerClient, prefix);
  let peakConnections = 0;
  const sampling = setInterval(() => {
    void publisherClient.clientList().then((list) => {
      const mine = list.filter((c) => c.name === name || c.name.startsWith(`${name}:`)).length;
      peakConnections = Math.max(peakConnections, mine);
    });
  }, 20);
  const latenciesMs: number[] = [];
  const ids = Array.from({ length: READERS }, () => randomUUID());
  const readAll = async (id: string): Promise<void> => {
    for (let cursor = RELAY_START, seen = 0; seen < EVENTS;) {
      const entries = await reader.read(id, cursor, READ_BLOCK_MS);
      const at = nowMs();
      for (const { event } of entries) if (event.type === 'delta') latenciesMs.push(at - Number(event.text));
      seen += entries.length;
      cursor = entries.at(-1)?.id ?? cursor;
    }
  };
  const publishAll = async (id: string, offsetMs: number): Promise<void> => {
    await new Promise((resolve) => setTimeout(resolve, offsetMs));
    for (let n = 1; n <= EVENTS; n++) {
      await publisher.publish(id, { type: 'delta', attempt: 1, text: String(nowMs()), n });
      if (DELTA_MS > 0) await new Promise((resolve) => setTimeout(resolve, DELTA_MS));
    }
  };
  try {
    await Promise.all([
      ...ids.map((id) => readAll(id)),
      ...ids.map((id, i) => publishAll(id, 100 + ((i * 7) % Math.max(1, DELTA_MS)))),
    ]);
  } finally {
    clearInterval(sampling);
    await reader.close();
    await publisher.close();
    for await (const keys of readerClient.scanIterator({ MATCH: `${prefix}*` }))
      if (keys.length > 0) await readerClient.del(keys);
    await Promise.all([readerClient.close(), publisherClient.close()]);
  }
  return { peakConnections, latenciesMs };
}

async function main(): Promise<void> {
  log(`relay: ${READERS} readers × ${EVENTS} deltas every ${DELTA_MS} ms`);
  const baseline = await run('per-reader');
  const shared = await run('shared');
  const designs = [
    ['shared reader', shared],
    ['one per reader (before)', baseline],
  ] as const;
  const figures = [
    ...designs.map(([label, r]) => ({
      figure: `reader connections at peak, ${label}`,
      value: r.peakConnections,
      unit: '',
    })),
    ...designs.flatMap(([label, r]) =>
      [50, 95].map((p) => ({
        figure: `publish → read p${p}, ${label}`,
        value: round(percentile(r.latenciesMs, p)),
        unit: 'ms',
      })),
    ),
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
