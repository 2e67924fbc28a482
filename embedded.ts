// The quick start's composition root (`npm start`): nothing to configure. PGlite + pgvector
// served over the Postgres wire protocol unless DATABASE_URL, in-process relay and counters
// unless REDIS_URL, a Temporal dev server child process unless TEMPORAL_ADDRESS, and the API
// and worker in this one process. State lives in .agentry/; the first run generates the
// application secret and the admin key and prints the key once. Ctrl-C stops everything.
import { shutdownTelemetry, startTelemetry } from './infra/telemetry';
// Tracing (when OTEL_* asks for it) must start before express, pg and http load.
startTelemetry('agentry');
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { startApi } from './api/server';
import { loadConfig } from './infra/config';
import { KeyRing } from './infra/crypto';
import { newId } from './infra/ids';
import { createLogger, temporalLogger } from './infra/logger';
import { connectTemporal } from './infra/temporal-connection';
import { installTemporalMetrics } from './infra/temporal-metrics';
import { connectTemporalClient, createRuntime } from './runtime';
import { startWorker } from './start-worker';

interface Secrets {
  applicationSecret: string;
  adminKeyId: string;
  adminKeySecret: string;
}

/** What to stop, in reverse order, on Ctrl-C or a failed start. */
const stops: (() => Promise<unknown>)[] = [];

/** The checkout: embedded.ts at its root, or dist/embedded.js one level down. */
const ROOT = existsSync(path.join(__dirname, 'scripts', 'temporal-dev-server.sh'))
  ? __dirname
  : path.resolve(__dirname, '..');

function loadOrCreateSecrets(stateDir: string): { secrets: Secrets; created: boolean } {
  const file = path.join(stateDir, 'secrets.json');
  if (existsSync(file)) return { secrets: JSON.parse(readFileSync(file, 'utf8')) as Secrets, created: false };
  const secrets: Secrets = {
    applicationSecret: randomBytes(32).toString('base64url'),
    adminKeyId: newId(),
    adminKeySecret: randomBytes(32).toString('base64url'),
  };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return { secrets, created: true };
}

/** A path as the reader can use it where they started: relative inside the cwd, else absolute. */
function shownPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

/** `preferred` if free on 127.0.0.1, else any free port. */
function freePort(preferred: number): Promise<number> {
  const attempt = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const { port: bound } = server.address() as { port: number };
        server.close(() => resolve(bound));
      });
    });
  return attempt(preferred).catch(() => attempt(0));
}

/**
 * A dev server child through scripts/temporal-dev-server.sh, the one place that starts dev
 * servers (search attributes, latency settings, SQLite in WAL mode). It runs in the background;
 * `stop` ends it.
 */
async function startTemporal(
  stateDir: string,
  codecEndpoint: string,
): Promise<{ address: string; uiPort: number; pid: number }> {
  const port = await freePort(7233);
  const uiPort = await freePort(8233);
  const script = path.join(ROOT, 'scripts', 'temporal-dev-server.sh');
  const args = [
    ...[script, String(port), stateDir, '--ui-port', String(uiPort)],
    ...['--db-filename', path.join(stateDir, 'temporal.db'), '--ui-codec-endpoint', codecEndpoint],
  ];
  const { stdout } = await promisify(execFile)('bash', args, { encoding: 'utf8' }).catch((err: unknown) => {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`Could not start the Temporal dev server: ${stderr || (err as Error).message}`);
  });
  const pid = Number(stdout.trim());
  if (!Number.isInteger(pid)) throw new Error(`A Temporal server already answers on 127.0.0.1:${port}`);
  return { address: `127.0.0.1:${port}`, uiPort, pid };
}

/** Ends a background process and waits (up to 10 s) until it is gone. */
async function stopProcess(pid: number): Promise<void> {
  const alive = (): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(pid, 'SIGKILL');
}

async function main(): Promise<void> {
  // Configuration problems are reported before anything starts.
  const early = loadConfig({ ...process.env, HOST: process.env.HOST ?? '127.0.0.1' });
  const stateDir = path.resolve(early.stateDir);
  mkdirSync(stateDir, { recursive: true });
  const { secrets, created } = loadOrCreateSecrets(stateDir);
  const port = early.port;
  const temporalMetrics = await installTemporalMetrics({
    logger: temporalLogger(createLogger(early.logLevel)),
  });

  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    const pglite = await PGlite.create({ dataDir: path.join(stateDir, 'pgdata'), extensions: { vector } });
    const socket = new PGLiteSocketServer({
      db: pglite,
      host: '127.0.0.1',
      port: await freePort(54329),
      maxConnections: 4,
    });
    await socket.start();
    databaseUrl = `postgres://postgres@${socket.getServerConn()}/postgres`;
    stops.push(async () => {
      await socket.stop();
      await pglite.close();
    });
  }

  let temporalAddress = process.env.TEMPORAL_ADDRESS;
  let uiPort: number | undefined;
  if (!temporalAddress) {
    // The UI decodes through the capability URL (DX-6); the secret of the config below wins.
    const secret = early.applicationSecret ?? secrets.applicationSecret;
    const capability = new KeyRing(secret).codecCapability();
    const temporal = await startTemporal(stateDir, `http://127.0.0.1:${port}/temporal-codec/${capability}`);
    temporalAddress = temporal.address;
    uiPort = temporal.uiPort;
    stops.push(() => stopProcess(temporal.pid));
  }

  const config = loadConfig({
    AGENTRY_APPLICATION_SECRET: secrets.applicationSecret,
    AGENTRY_ADMIN_KEY_ID: secrets.adminKeyId,
    AGENTRY_ADMIN_KEY_SECRET: secrets.adminKeySecret,
    ...(uiPort
      ? { AGENTRY_CODEC_CORS_ORIGINS: `http://127.0.0.1:${uiPort},http://localhost:${uiPort}` }
      : {}),
    HOST: '127.0.0.1',
    ...process.env,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    // PGlite runs one query at a time: one pooled connection (DESIGN §7).
    ...(process.env.DATABASE_URL ? {} : { AGENTRY_DB_POOL_MAX: '1' }),
  });
  const logger = createLogger(config.logLevel);
  const rt = await createRuntime(config, logger);
  // One connection for the worker and the client: workflow starts are eager (DESIGN §6).
  const connection = await connectTemporal(config.temporal);
  const workerMetrics = new Registry();
  collectDefaultMetrics({ register: workerMetrics, prefix: 'agentry_worker_' });
  const worker = await startWorker(rt, connection, workerMetrics);
  const temporal = await connectTemporalClient(rt, connection);
  const server = await startApi(rt, temporal, {
    extraMetrics: async () => `${await workerMetrics.metrics()}\n${await temporalMetrics()}`,
    eagerStart: true,
  });

  const lines = [
    '',
    `Agentry is running on http://127.0.0.1:${port}  (API reference: http://127.0.0.1:${port}/docs)`,
    uiPort ? `Temporal UI: http://127.0.0.1:${uiPort}` : `Temporal: ${temporalAddress}`,
    `Database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : `embedded PGlite in ${stateDir}`}; relay: ${config.redisUrl ? 'Redis' : 'in-process'}`,
  ];
  if (created) {
    lines.push(
      '',
      `Admin API key (shown once; stored in ${shownPath(path.join(stateDir, 'secrets.json'))}):`,
      `  x-api-key: ${secrets.adminKeyId}`,
      `  x-api-key-secret: ${secrets.adminKeySecret}`,
    );
  }
  console.log(lines.join('\n'));

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping Agentry...');
    server.closeAllConnections();
    server.close();
    await worker.stop().catch(() => undefined);
    await connection.close().catch(() => undefined);
    await rt.close().catch(() => undefined);
    for (const fn of stops.reverse()) await fn().catch(() => undefined);
    await shutdownTelemetry().catch(() => undefined);
    process.exit(0);
  };
  // `on`, not `once`: Ctrl-C reaches node twice (from the terminal, and forwarded by npm, whose
  // child node is), and a second signal without a listener would kill it mid-stop.
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch(async (err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  // Stop whatever had started (e.g. the Temporal dev server) before giving up.
  for (const fn of stops.reverse()) await fn().catch(() => undefined);
  process.exit(1);
});
