// e2e and reliability tests run the API and the worker as child processes from dist/ (built by
// `npm run build` in scripts/test.sh), so a test can kill and restart them.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { testEnv, type TestEnv } from './config';
import { createTestDatabase, type TestDatabase } from './database';
import { Api } from './http';
import { deleteRetentionSchedule } from './schedules';
import { ROOT } from './services';

/** The built code the children run; AGENTRY_TEST_DIST points a run at its own build. */
export const DIST = process.env.AGENTRY_TEST_DIST ?? path.join(ROOT, 'dist');

export interface Child {
  process: ChildProcess;
  output: string[];
  /** The API's port, once it logged that it listens. */
  port?: number;
  /** The worker's metrics port, once it logged that it runs. */
  metricsPort?: number;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** How to run a child: under a wrapper command (e.g. strace), in another working directory. */
export interface SpawnOptions {
  wrapper?: string[];
  cwd?: string;
}

function start(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs = 30_000,
  { wrapper = [], cwd }: SpawnOptions = {},
): Promise<Child> {
  const argv = [...wrapper, process.execPath, path.join(DIST, script)];
  const child = spawn(argv[0]!, argv.slice(1), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  const output: string[] = [];
  const handle: Child = {
    process: child,
    output,
    kill: (signal = 'SIGKILL') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not start:\n${output.join('')}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      output.push(text);
      const match = ready.exec(text);
      if (match) {
        clearTimeout(timer);
        const port = /"port":(\d+)/.exec(text)?.[1];
        if (port) handle.port = Number(port);
        const metricsPort = /"metricsPort":(\d+)/.exec(text)?.[1];
        if (metricsPort) handle.metricsPort = Number(metricsPort);
        resolve(handle);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}:\n${output.join('')}`));
    });
  });
}

export const startApiProcess = (env: Record<string, string>, options?: SpawnOptions): Promise<Child> =>
  start('api/server.js', { ...env, AGENTRY_LOG_LEVEL: 'info' }, /API listening/, 30_000, options);

export const startWorkerProcess = (env: Record<string, string>, options?: SpawnOptions): Promise<Child> =>
  start(
    'worker.js',
    { ...env, AGENTRY_LOG_LEVEL: 'info', AGENTRY_WORKER_METRICS_PORT: '0' },
    /worker running/,
    30_000,
    options,
  );

export interface ProcessStack {
  database: TestDatabase;
  env: TestEnv;
  /** The current API process (replaced by `restartApi`). */
  api: Child;
  /** Every API process started, the first and its replicas; killed ones stay listed. */
  apis: Child[];
  /** The first worker. */
  worker: Child;
  /** Every worker started, the first included; killed ones stay listed. */
  workers: Child[];
  /** An API client authenticated as the bootstrap admin key (it follows API restarts). */
  admin: Api;
  /** One more worker process on the same task queue. */
  startWorker(): Promise<Child>;
  /** One more API process (a replica) on the same database, Redis and task queue, on a port of its own. */
  startApi(): Promise<Child>;
  /** An API client of one API process, authenticated as the bootstrap admin key. */
  adminOf(api: Child): Api;
  /** Kills the API process (SIGKILL by default) and starts a new one on the same port. */
  restartApi(signal?: NodeJS.Signals): Promise<Child>;
  /** Stops every process (SIGKILL after 5 s) and drops the database. */
  stop(): Promise<void>;
}

/** SIGTERM, then SIGKILL if the process is still there after `graceMs`. */
async function terminate(child: Child, graceMs = 5000): Promise<void> {
  const timer = setTimeout(() => void child.kill('SIGKILL'), graceMs);
  await child.kill('SIGTERM');
  clearTimeout(timer);
}

/** A fresh database, then the API and a worker as child processes on it. */
export async function startProcessStack(overrides: Record<string, string> = {}): Promise<ProcessStack> {
  const database = await createTestDatabase();
  const env = testEnv(database.url, overrides);
  const started = await Promise.allSettled([startApiProcess(env.env), startWorkerProcess(env.env)]);
  const [api, worker] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  if (!api || !worker) {
    await Promise.all([api?.kill(), worker?.kill()]);
    await database.drop();
    throw started.map((s) => (s.status === 'rejected' ? s.reason : null)).find(Boolean);
  }
  const adminOf = (child: Child): Api =>
    new Api(`http://127.0.0.1:${child.port}`, { id: env.adminKeyId, secret: env.adminKeySecret });
  const stack: ProcessStack = {
    database,
    env,
    api,
    apis: [api],
    worker,
    workers: [worker],
    admin: adminOf(api),
    async startWorker() {
      const child = await startWorkerProcess(env.env);
      stack.workers.push(child);
      return child;
    },
    async startApi() {
      const child = await startApiProcess(env.env);
      stack.apis.push(child);
      return child;
    },
    adminOf,
    async restartApi(signal = 'SIGKILL') {
      await stack.api.kill(signal);
      stack.api = await startApiProcess({ ...env.env, PORT: String(api.port) });
      stack.apis.push(stack.api);
      return stack.api;
    },
    async stop() {
      await Promise.all([...stack.apis, ...stack.workers].map((child) => terminate(child)));
      await deleteRetentionSchedule(env.config.taskQueue);
      await database.drop();
    },
  };
  return stack;
}
