// `npm run bench -- relay-transport`: what the relay's Redis structure costs: Streams (XADD; one
// XREAD BLOCK connection per stream, or one XREAD BLOCK over every stream, as the product read
// until issue 25), pub/sub alone (PUBLISH, one SUBSCRIBE connection for every channel), and what
// the product does now, a stream for replay plus pub/sub for delivery (one script: XADD and
// PUBLISH; one SUBSCRIBE connection), on a private redis-server with the production compose
// file's settings (AOF on, fsync every second), so INFO cpu counts this benchmark only.
// BENCH_RELAY_EVENTS events per stream (default 200); the runs (BENCH_RELAY_RUNS, default
// `1:10,32:10,1000:100`: streams and ms between a stream's events); each event an encrypted delta
// as the relay stores it (base64 of AES-GCM, 100–300 bytes). Reports publish → receipt p50 / p99,
// Redis CPU and this process's CPU (publishers and readers) per 1000 events, memory and AOF bytes
// per stream, and what a late or re-attaching reader gets.
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { KeyRing } from '../infra/crypto';
import type { RedisClient } from '../infra/redis-client';
import { envInt, log, nowMs } from './lib/env';
import { info, startRedis } from './lib/redis-server';
import { machine, percentile, printRows, round, writeResults } from './lib/report';

const EVENTS = envInt('BENCH_RELAY_EVENTS', 200);
const RUNS = (process.env.BENCH_RELAY_RUNS ?? '1:10,32:10,1000:100').split(',').map((run) => {
  const [streams, deltaMs] = run.split(':').map(Number);
  if (!Number.isInteger(streams) || streams! < 1 || !Number.isInteger(deltaMs) || deltaMs! < 0)
    throw new Error(`BENCH_RELAY_RUNS: "${run}" is not <streams>:<ms between events>`);
  return { streams: streams!, deltaMs: deltaMs! };
});
/** A connection per stream is left out above this many streams. */
const PER_STREAM_CONNECTIONS_MAX = 100;
const keyring = new KeyRing(randomBytes(32).toString('hex'));
const WORDS = 'the valve opens with a lever and the credentials rotate every thirty days'.split(' ');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An encrypted delta of 2–24 words, base64 as the relay stores it. */
function delta(n: number): string {
  const words = Array.from({ length: 2 + (n % 23) }, (_, i) => WORDS[(n + i) % WORDS.length]);
  return keyring
    .encryptJson('relay', { type: 'delta', attempt: 1, text: ` ${words.join(' ')}`, n })
    .toString('base64');
}

type XReadReply = { name: string; messages: { id: string; message: Record<string, string> }[] }[] | null;

/** XREAD's reply as entries per stream. */
function rawEntries(reply: XReadReply): { name: string; entries: { id: string; data: string }[] }[] {
  return (reply ?? []).map(({ name, messages }) => ({
    name,
    entries: messages.map((m) => ({ id: m.id, data: m.message.d ?? '' })),
  }));
}

const redisCpuMs = (i: Record<string, number>): number => (i.used_cpu_sys! + i.used_cpu_user!) * 1000;

/** Redis's own CPU per second with nobody talking to it (its timers), subtracted from each run. */
async function idleCpuMsPerS(redis: RedisClient): Promise<number> {
  const [before, start] = [await info(redis), nowMs()];
  await sleep(3000);
  return (redisCpuMs(await info(redis)) - redisCpuMs(before)) / ((nowMs() - start) / 1000);
}

/**
 * `streams-shared`: one XREAD BLOCK over every stream (the product's reader until issue 25);
 * `streams+pubsub`: the product's relay now (infra/redis-relay.ts).
 */
type Transport = 'streams' | 'streams-shared' | 'pubsub' | 'streams+pubsub';

/** The product's append (infra/redis-relay.ts), without its expiry. */
const APPEND = `
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local previous = '0'
if #last > 0 then previous = last[1][1] end
local id = redis.call('XADD', KEYS[1], '*', 'd', ARGV[1])
redis.call('PUBLISH', KEYS[1], previous .. ' ' .. id .. ' ' .. ARGV[1])
return id`;

/** A reader that follows one stream or channel and reports each payload it gets. */
interface Reader {
  stop(): Promise<void>;
}

async function attach(
  redis: RedisClient,
  transport: Transport,
  key: string,
  onEvent: () => void,
  afterId = '0',
): Promise<Reader & { lastId(): string }> {
  const conn = redis.duplicate();
  await conn.connect();
  let cursor = afterId;
  if (transport === 'pubsub') {
    await conn.subscribe(key, () => onEvent());
    return { lastId: () => cursor, stop: () => conn.close() };
  }
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const reply = await conn.xRead({ key, id: cursor }, { BLOCK: 1000 } /* as api/execution-response.ts */);
      for (const { entries } of rawEntries(reply))
        for (const { id } of entries) {
          cursor = id;
          onEvent();
        }
    }
  })();
  return { lastId: () => cursor, stop: async () => ((stopped = true), await loop, await conn.close()) };
}

/** Sends `payload` on `key`. */
function send(redis: RedisClient, transport: Transport, key: string, payload: string): Promise<unknown> {
  if (transport === 'pubsub') return redis.publish(key, payload);
  if (transport === 'streams+pubsub') return redis.eval(APPEND, { keys: [key], arguments: [payload] });
  return redis.xAdd(key, '*', { d: payload });
}

/** One connection reading every stream with one XREAD BLOCK, each entry to its stream's reader. */
async function sharedReader(
  redis: RedisClient,
  keys: string[],
  onEvent: (s: number) => void,
): Promise<Reader> {
  const conn = redis.duplicate();
  await conn.connect();
  const cursors = keys.map(() => '0');
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const reply = await conn.xRead(
        keys.map((key, s) => ({ key, id: cursors[s]! })),
        { BLOCK: 1000 },
      );
      for (const { name, entries } of rawEntries(reply)) {
        const s = keys.indexOf(name);
        for (const { id } of entries) {
          cursors[s] = id;
          onEvent(s);
        }
      }
    }
  })();
  return { stop: async () => ((stopped = true), await loop, await conn.close()) };
}

interface Run {
  transport: Transport;
  streams: number;
  deltaMs: number;
  clientCpuMsPer1000: number;
  p50: number;
  p99: number;
  cpuMsPer1000: number;
  memoryPerStream: number;
  aofPerEvent: number;
  payloadBytes: number;
}

async function measure(
  redis: RedisClient,
  transport: Transport,
  { streams, deltaMs: DELTA_MS }: { streams: number; deltaMs: number },
  idle: number,
): Promise<Run> {
  const prefix = `bench:${transport}:${streams}:${randomBytes(3).toString('hex')}:`;
  const keys = Array.from({ length: streams }, (_, i) => `${prefix}${i}`);
  const sentAt = keys.map(() => [] as number[]);
  const latencies: number[] = [];
  const received = keys.map(() => 0);
  const done = keys.map(() => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  });
  const readers: Reader[] = [];
  // Pub/sub: one subscriber connection for every channel, as an API process holds.
  const subscriber = transport === 'pubsub' || transport === 'streams+pubsub' ? redis.duplicate() : undefined;
  await subscriber?.connect();
  const onEvent = (s: number): void => {
    latencies.push(nowMs() - sentAt[s]![received[s]!]!);
    if (++received[s]! === EVENTS) done[s]!.resolve();
  };
  if (transport === 'streams-shared') readers.push(await sharedReader(redis, keys, onEvent));
  else
    for (const [s, key] of keys.entries()) {
      if (subscriber) await subscriber.subscribe(key, () => onEvent(s));
      else readers.push(await attach(redis, transport, key, () => onEvent(s)));
    }
  const payloads = Array.from({ length: EVENTS }, (_, n) => delta(n));
  const [before, start, cpuBefore] = [await info(redis), nowMs(), process.cpuUsage()];
  await Promise.all(
    keys.map(async (key, s) => {
      await sleep((s * 7) % Math.max(1, DELTA_MS));
      for (const payload of payloads) {
        sentAt[s]!.push(nowMs());
        await send(redis, transport, key, payload);
        if (DELTA_MS > 0) await sleep(DELTA_MS);
      }
    }),
  );
  await Promise.all(done.map((d) => d.promise));
  const cpu = process.cpuUsage(cpuBefore);
  await sleep(1100); // the AOF's once-a-second fsync and write of this run
  const after = await info(redis);
  const cpuMs = redisCpuMs(after) - redisCpuMs(before) - (idle * (nowMs() - start)) / 1000;
  let memory = 0;
  if (transport !== 'pubsub')
    for (const key of keys) memory += (await redis.memoryUsage(key, { SAMPLES: 0 })) ?? 0;
  await Promise.all(readers.map((r) => r.stop()));
  await subscriber?.close();
  if (transport !== 'pubsub') await redis.del(keys);
  const events = EVENTS * streams;
  return {
    transport,
    streams,
    deltaMs: DELTA_MS,
    clientCpuMsPer1000: round(((cpu.user + cpu.system) / 1000 / events) * 1000, 1),
    p50: round(percentile(latencies, 50)),
    p99: round(percentile(latencies, 99)),
    cpuMsPer1000: round((cpuMs / events) * 1000, 1),
    memoryPerStream: Math.round(memory / streams),
    aofPerEvent: Math.round((after.aof_current_size! - before.aof_current_size!) / events),
    payloadBytes: Math.round(payloads.reduce((sum, p) => sum + p.length, 0) / payloads.length),
  };
}

/**
 * What a reader gets of 30 events: one attaching after the first 10 (late), and one that reads
 * 10, goes away while 10 more are sent, and comes back (re-attach; a stream reader resumes after
 * its last id, as a client does with Last-Event-ID).
 */
async function behaviour(
  redis: RedisClient,
  transport: Transport,
): Promise<{ late: number; reattach: number }> {
  const key = `bench:behaviour:${transport}:${randomBytes(3).toString('hex')}`;
  const sendTen = async (k: string): Promise<void> => {
    for (let n = 0; n < 10; n++) await send(redis, transport, k, delta(n));
    await sleep(300);
  };
  let late = 0;
  await sendTen(`${key}:late`);
  const lateReader = await attach(redis, transport, `${key}:late`, () => late++);
  await sendTen(`${key}:late`);
  await sendTen(`${key}:late`);
  await lateReader.stop();
  let reattach = 0;
  const first = await attach(redis, transport, `${key}:again`, () => reattach++);
  await sendTen(`${key}:again`);
  await first.stop();
  await sendTen(`${key}:again`);
  const again = await attach(redis, transport, `${key}:again`, () => reattach++, first.lastId());
  await sendTen(`${key}:again`);
  await again.stop();
  await redis.del([`${key}:late`, `${key}:again`]);
  return { late, reattach };
}

async function main(): Promise<void> {
  log(
    `relay-transport: ${EVENTS} events per stream; runs ${RUNS.map((r) => `${r.streams}×${r.deltaMs} ms`).join(', ')}`,
  );
  const server = await startRedis();
  const redis: RedisClient = createClient({ url: server.url, name: 'bench-relay-transport' });
  await redis.connect();
  try {
    const idle = await idleCpuMsPerS(redis);
    const runs: Run[] = [];
    for (const run of RUNS)
      for (const transport of ['streams', 'streams-shared', 'pubsub', 'streams+pubsub'] as const)
        if (transport !== 'streams' || run.streams <= PER_STREAM_CONNECTIONS_MAX)
          runs.push(await measure(redis, transport, run, idle));
    const kept = { streams: await behaviour(redis, 'streams'), pubsub: await behaviour(redis, 'pubsub') };
    printRows(
      `relay transports (${EVENTS} events per stream; private Redis, AOF on)`,
      [
        'transport',
        'streams',
        'every ms',
        'p50 ms',
        'p99 ms',
        'Redis CPU ms / 1000 events',
        'client CPU ms / 1000 events',
        'memory / stream B (per event)',
        'AOF B / event',
      ],
      runs.map((r) =>
        [
          r.transport,
          r.streams,
          r.deltaMs,
          r.p50,
          r.p99,
          r.cpuMsPer1000,
          r.clientCpuMsPer1000,
          `${r.memoryPerStream} (${Math.round(r.memoryPerStream / EVENTS)})`,
          r.aofPerEvent,
        ].map(String),
      ),
    );
    printRows(
      'events a reader gets of 30',
      ['transport', 'attaching after 10', 're-attaching after a gap of 10'],
      (['streams', 'pubsub'] as const).map((t) => [t, String(kept[t].late), String(kept[t].reattach)]),
    );
    log(`payload: ${runs[0]!.payloadBytes} bytes on average (encrypted delta, base64)`);
    log(`Redis idle CPU ${round(idle, 2)} ms/s, subtracted`);
    writeResults('relay-transport', {
      machine: machine(),
      events: EVENTS,
      runs,
      behaviour: kept,
    });
  } finally {
    await redis.close();
    await server.stop();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
