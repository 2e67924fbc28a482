// What the streams benchmark reads around a measured phase besides /proc: the heartbeats the
// Temporal dev server recorded (its Prometheus text, BENCH_TEMPORAL_METRICS_URL, which
// scripts/bench.sh sets when it starts the server with --metrics-port) and the CPU of the
// benchmark's private Redis (INFO cpu).
import { createClient } from 'redis';
import type { RedisClient } from '../../infra/redis-client';
import { info } from './redis-server';

export const TEMPORAL_METRICS_URL = process.env.BENCH_TEMPORAL_METRICS_URL ?? '';

/**
 * Heartbeat requests the server's frontend has answered so far (`service_requests` of the
 * operations RecordActivityTaskHeartbeat and …ById, frontend only: the history service counts each
 * one again as it handles it), or null without a metrics URL.
 */
export async function heartbeatsSoFar(url = TEMPORAL_METRICS_URL): Promise<number | null> {
  if (!url) return null;
  const text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('service_requests{') || !line.includes('service_name="frontend"')) continue;
    if (!/operation="RecordActivityTaskHeartbeat(ById)?"/.test(line)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** A client of the benchmark's Redis that reads its CPU seconds (user + system) so far. */
export async function redisCpu(url: string): Promise<{ seconds(): Promise<number>; close(): Promise<void> }> {
  const client = createClient({ url }) as unknown as RedisClient;
  client.on('error', () => undefined);
  await client.connect();
  return {
    seconds: async () => {
      const figures = await info(client);
      return (figures.used_cpu_sys ?? 0) + (figures.used_cpu_user ?? 0);
    },
    close: async () => void (await client.close()),
  };
}
