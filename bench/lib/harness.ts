// Shared pieces of the benchmarks (DESIGN §6): the product in this process on a fresh database
// (API on an ephemeral port, worker on its own task queue, the same code as api/server.ts and
// worker.ts), the admin database, an authenticated HTTP client, streamed executions as a client
// reads them and closed-loop clients.
import type { Client as TemporalClient } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime as TemporalRuntime } from '@temporalio/worker';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { startApi } from '../../api/server';
import { loadConfig, type Config } from '../../infra/config';
import { createLogger } from '../../infra/logger';
import { connectTemporalClient, createRuntime, type Runtime } from '../../runtime';
import { startWorker, type WorkerHandle } from '../../start-worker';
import { ADMIN_DATABASE_URL, REDIS_URL, ROOT, TEMPORAL_ADDRESS, log, nowMs } from './env';

/** The admin URL with another database name. */
export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** One statement on the admin database (CREATE / DROP DATABASE). */
export async function admin(sql: string): Promise<void> {
  const client = new PgClient({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface HttpResult<T> {
  status: number;
  body: T;
}

/** JSON over HTTP with the key headers, as a client sends them. */
export class HttpClient {
  constructor(
    readonly baseUrl: string,
    private readonly keyId: string,
    private readonly keySecret: string,
  ) {}

  async request<T = unknown>(method: string, urlPath: string, body?: unknown): Promise<HttpResult<T>> {
    const res = await fetch(`${this.baseUrl}${urlPath}`, {
      method,
      headers: {
        'x-api-key': this.keyId,
        'x-api-key-secret': this.keySecret,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  }

  /** The request, which must answer `status`; anything else throws with the body. */
  async expect<T = unknown>(status: number, method: string, urlPath: string, body?: unknown): Promise<T> {
    const res = await this.request<T>(method, urlPath, body);
    if (res.status !== status) {
      throw new Error(
        `${method} ${urlPath} → ${res.status} (expected ${status}): ${JSON.stringify(res.body)}`,
      );
    }
    return res.body;
  }
}

export interface BenchStack {
  rt: Runtime;
  config: Config;
  http: HttpClient;
  temporal: TemporalClient;
  worker: WorkerHandle;
  databaseName: string;
  stop(): Promise<void>;
}

/**
 * A fresh database (migrated by the runtime), the API and a worker in this process on the same
 * Redis and Temporal, and a bootstrap admin key. Product settings (AGENTRY_INGESTION_*,
 * AGENTRY_DB_POOL_MAX, AGENTRY_HNSW_EF_SEARCH...) pass through from the environment.
 */
/** `env`: settings of this benchmark's stack (the environment's win over them). */
export async function startBenchStack(name: string, env: Record<string, string> = {}): Promise<BenchStack> {
  // The SDK's own INFO lines (worker state changes) would interleave with the report.
  TemporalRuntime.install({ logger: new DefaultLogger('WARN') });
  const suffix = randomBytes(4).toString('hex');
  const databaseName = `agentry_bench_${name}_${suffix}`;
  await admin(`CREATE DATABASE ${databaseName}`);
  const adminKeyId = randomUUID();
  const adminKeySecret = randomBytes(24).toString('base64url');
  const config = loadConfig({
    AGENTRY_LOG_LEVEL: 'warn',
    AGENTRY_APPLICATION_SECRET: randomBytes(32).toString('hex'),
    ...env,
    ...process.env,
    DATABASE_URL: databaseUrl(databaseName),
    REDIS_URL,
    TEMPORAL_ADDRESS,
    AGENTRY_REDIS_PREFIX: `agentry-bench-${suffix}:`,
    AGENTRY_TASK_QUEUE: `bench-${suffix}`,
    AGENTRY_ADMIN_KEY_ID: adminKeyId,
    AGENTRY_ADMIN_KEY_SECRET: adminKeySecret,
    AGENTRY_WORKFLOW_BUNDLE: path.join(ROOT, 'dist', 'workflow-bundle.js'),
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const logger = createLogger(config.logLevel, process.stderr);
  const rt = await createRuntime(config, logger);
  const temporal = await connectTemporalClient(rt);
  const connection = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
  const worker = await startWorker(rt, connection);
  const server: Server = await startApi(rt, temporal);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    rt,
    config,
    http: new HttpClient(url, adminKeyId, adminKeySecret),
    temporal,
    worker,
    databaseName,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await worker.stop();
      await connection.close();
      await temporal.connection.close();
      await rt.close();
      if (process.env.BENCH_KEEP_DB === '1') log(`database kept: ${databaseName}`);
      else await admin(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    },
  };
}

export interface StreamedExecution {
  executionId: string;
  /** Wall-clock time of sending the request (ms). */
  sentAt: number;
  /** Milliseconds from sending to the response headers, the first delta line, the end. */
  headersMs: number;
  ttftMs: number;
  totalMs: number;
  deltas: number;
}

/**
 * POSTs an execution request that answers NDJSON and reads the stream to its end, timing the first
 * `delta`. Anything but 200, an in-band `error` event, or an end without `done` throws.
 */
export async function streamExecution(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs = 60_000,
): Promise<StreamedExecution> {
  const sentAt = nowMs();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const headersMs = nowMs() - sentAt;
  if (res.status !== 200 || !res.body) throw new Error(`execute → ${res.status}: ${await res.text()}`);
  const executionId = res.headers.get('x-agentry-execution-id') ?? '';
  const decoder = new TextDecoder();
  let buffered = '';
  let ttftMs = NaN;
  let deltas = 0;
  let done = false;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!line) continue;
      const event = JSON.parse(line) as { type: string; detail?: string };
      if (event.type === 'delta') {
        if (deltas === 0) ttftMs = nowMs() - sentAt;
        deltas += 1;
      } else if (event.type === 'error') {
        throw new Error(`execution ${executionId} failed in-band: ${event.detail ?? line}`);
      } else if (event.type === 'done') {
        done = true;
      }
    }
  }
  if (!done || deltas === 0) throw new Error(`execution ${executionId}: stream ended without done/deltas`);
  return { executionId, sentAt, headersMs, ttftMs, totalMs: nowMs() - sentAt, deltas };
}
