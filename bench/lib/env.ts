// Where the benchmarks run: the repository root, the services' URLs, settings from the
// environment, the log line and the clock. Light on imports: the floor worker loads it too.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

/** The repository root (where package.json is), from dist/bench or bench. */
export const ROOT = (() => {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return process.cwd();
  }
})();

export const ADMIN_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEMPORAL_ADDRESS = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';

export const log = (message: string): void => {
  process.stderr.write(`[bench] ${message}\n`);
};

export function envInt(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min} (got "${raw}")`);
  return n;
}

/** Wall-clock milliseconds with sub-millisecond precision (comparable with Temporal's event times). */
export const nowMs = (): number => performance.timeOrigin + performance.now();
