// A private redis-server for the benchmarks that read Redis's own figures (INFO cpu, memory, AOF):
// started on a free loopback port in a temporary directory with the production compose file's
// settings (AOF on, fsync every second, no RDB snapshots), stopped and removed at the end.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from 'redis';
import type { RedisClient } from '../../infra/redis-client';
import { freePort, stopChild } from './processes';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts redis-server (from PATH) and waits until it answers. */
export async function startRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  const child = spawn('redis-server', [...args, '--appendonly', 'yes'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const probe = createClient({ url, socket: { reconnectStrategy: false } });
    probe.on('error', () => undefined);
    if (
      await probe.connect().then(
        () => probe.close().then(() => true),
        () => false,
      )
    )
      break;
    if (i > 100) throw new Error('redis-server did not start within 10 s (is it on PATH?)');
    await sleep(100);
  }
  return {
    url,
    stop: () => stopChild(child, 5000).then(() => rmSync(dir, { recursive: true, force: true })),
  };
}

/** INFO's numeric fields. */
export async function info(redis: RedisClient): Promise<Record<string, number>> {
  const text = await redis.info();
  return Object.fromEntries(
    text.split('\r\n').flatMap((line) => {
      const [k, v] = line.split(':');
      return k && v !== undefined && /^-?[\d.]+$/.test(v) ? [[k, Number(v)]] : [];
    }),
  );
}
