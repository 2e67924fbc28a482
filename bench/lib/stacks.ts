// Agentry as the benchmarks run it, on a fresh database of its own, the local Redis and the
// benchmark's Temporal dev server, each on its own task queue and Redis prefix, logs in
// bench/.state/<name>-<id>/:
//  - production: the API and the worker as two processes (dist/api/server.js, dist/worker.js);
//  - embedded: API and worker in one process (dist/embedded.js, the `npm start` entry point).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { HttpClient, admin, databaseUrl } from './harness';
import { REDIS_URL, ROOT, TEMPORAL_ADDRESS, log } from './env';
import { freePort, startProcess, type Proc } from './processes';

export type StackMode = 'production' | 'embedded';

export interface AgentryStack {
  mode: StackMode;
  apiUrl: string;
  http: HttpClient;
  /** The admin key's headers. */
  key: Record<string, string>;
  /** The process that serves HTTP and the one that runs the worker (the same one when embedded). */
  api: Proc;
  worker: Proc;
  stateDir: string;
  /** Its database and its Redis key prefix. */
  databaseName: string;
  /** Prometheus texts of the API and the worker (the same endpoint when embedded). */
  metricsUrls: { api: string; worker: string };
  redisPrefix: string;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** The checkout whose dist/ runs (default: this one), e.g. an older build to compare with. */
  root?: string;
  /** Settings of both processes (over the stack's own). */
  env?: Record<string, string>;
  /** Embedded only: the quick start's own stores, PGlite and the in-process relay (no database here). */
  ownStores?: boolean;
  /** Production only: Node's own arguments for the API and the worker (e.g. `--cpu-prof`). */
  nodeArgs?: Partial<Record<'api' | 'worker', string[]>>;
  /** host:port the processes reach PostgreSQL at instead of the server's (a counting proxy). */
  databaseAddress?: string;
}

const viaAddress = (url: string, address: string | undefined): string => {
  if (!address) return url;
  const u = new URL(url);
  u.host = address;
  return u.toString();
};

/**
 * Starts Agentry in `mode` on a fresh database `agentry_bench_<name>_<id>`; `workerEnv` is added to
 * the worker process's environment only (production mode).
 */
export async function startAgentryStack(
  mode: StackMode,
  name: string,
  workerEnv: Record<string, string> = {},
  options: StackOptions = {},
): Promise<AgentryStack> {
  const root = options.root ?? ROOT;
  const ownStores = mode === 'embedded' && options.ownStores === true;
  const suffix = randomBytes(4).toString('hex');
  const stateDir = path.join(ROOT, 'bench', '.state', `${name}-${suffix}`);
  mkdirSync(stateDir, { recursive: true });
  const databaseName = `agentry_bench_${name.replace(/-/g, '_')}_${suffix}`;
  const keyId = randomUUID();
  const keySecret = randomBytes(24).toString('base64url');
  const [apiPort, metricsPort] = [await freePort(), await freePort()];
  const env: Record<string, string> = {
    AGENTRY_LOG_LEVEL: 'info',
    ...(process.env as Record<string, string>),
    DATABASE_URL: viaAddress(databaseUrl(databaseName), options.databaseAddress),
    REDIS_URL,
    TEMPORAL_ADDRESS,
    AGENTRY_APPLICATION_SECRET: randomBytes(32).toString('hex'),
    AGENTRY_ADMIN_KEY_ID: keyId,
    AGENTRY_ADMIN_KEY_SECRET: keySecret,
    AGENTRY_REDIS_PREFIX: `agentry-bench-${suffix}:`,
    AGENTRY_TASK_QUEUE: `bench-${name}-${suffix}`,
    AGENTRY_WORKFLOW_BUNDLE: path.join(root, 'dist', 'workflow-bundle.js'),
    AGENTRY_WORKER_METRICS_PORT: String(metricsPort),
    AGENTRY_STATE_DIR: stateDir,
    PORT: String(apiPort),
    HOST: '127.0.0.1',
    ...options.env,
  };
  const spawnOptions = { root, unset: ownStores ? ['DATABASE_URL', 'REDIS_URL'] : [] };
  if (ownStores) {
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
  } else await admin(`CREATE DATABASE ${databaseName}`);
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const procs: Proc[] = [];
  const stop = async () => {
    await Promise.all(procs.map((p) => p.stop()));
    if (ownStores) return;
    if (process.env.BENCH_KEEP_DB === '1') log(`database kept: ${databaseName}`);
    else await admin(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  };
  try {
    if (mode === 'embedded') {
      procs.push(
        await startProcess('embedded', 'embedded.js', env, `${apiUrl}/readyz`, stateDir, spawnOptions),
      );
    } else {
      // The API first: it migrates the fresh database before the worker connects.
      procs.push(
        await startProcess('api', 'api/server.js', env, `${apiUrl}/readyz`, stateDir, {
          ...spawnOptions,
          nodeArgs: options.nodeArgs?.api,
        }),
      );
      const metrics = `http://127.0.0.1:${metricsPort}/metrics`;
      procs.push(
        await startProcess('worker', 'worker.js', { ...env, ...workerEnv }, metrics, stateDir, {
          ...spawnOptions,
          nodeArgs: options.nodeArgs?.worker,
        }),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const api = procs[0]!;
  const worker = procs.at(-1)!;
  log(
    `${mode}: ${procs.map((p) => `${p.name} pid ${p.child.pid}`).join(', ')} on :${apiPort}; logs in ${stateDir}`,
  );
  return {
    mode,
    apiUrl,
    http: new HttpClient(apiUrl, keyId, keySecret),
    key: { 'x-api-key': keyId, 'x-api-key-secret': keySecret },
    api,
    worker,
    stateDir,
    databaseName,
    metricsUrls: {
      api: `${apiUrl}/metrics`,
      worker: mode === 'embedded' ? `${apiUrl}/metrics` : `http://127.0.0.1:${metricsPort}/metrics`,
    },
    redisPrefix: env.AGENTRY_REDIS_PREFIX!,
    ...(ownStores ? { databaseName: '(PGlite)' } : {}),
    stop,
  };
}
