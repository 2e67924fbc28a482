// Shared pieces of the benchmarks (DESIGN §6): the product in this process on a fresh database
// (API on an ephemeral port, worker on its own task queue, the same code as api/server.ts and
// worker.ts), an authenticated HTTP client, percentiles, the report table and bench/results.json.
import type { Client as TemporalClient } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime as TemporalRuntime } from '@temporalio/worker';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { startApi } from '../../api/server';
import type { FakeModelServer } from '../../test/fakes/fake-model-server';
import { loadConfig, type Config } from '../../infra/config';
import { createLogger } from '../../infra/logger';
import { connectTemporalClient, createRuntime, type Runtime } from '../../runtime';
import { startWorker, type WorkerHandle } from '../../worker';
import { Corpus } from './synthetic';

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
export async function startBenchStack(name: string): Promise<BenchStack> {
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

/** Wall-clock milliseconds with sub-millisecond precision (comparable with Temporal's event times). */
export const nowMs = (): number => performance.timeOrigin + performance.now();

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

export interface ClosedLoop {
  ttft: number[];
  total: number[];
  errors: string[];
  completed: number;
}

/**
 * `clients` clients, each running `once(client, i)` back to back until `deadline` (wall ms) or
 * `stop()`; records time to first token and total time of each success, and each error message.
 */
export async function closedLoop(
  clients: number,
  deadline: number,
  stop: () => boolean,
  once: (client: number, i: number) => Promise<StreamedExecution>,
): Promise<ClosedLoop> {
  const out: ClosedLoop = { ttft: [], total: [], errors: [], completed: 0 };
  const client = async (c: number): Promise<void> => {
    for (let i = 0; nowMs() < deadline && !stop(); i++) {
      try {
        const ex = await once(c, i);
        out.ttft.push(ex.ttftMs);
        out.total.push(ex.totalMs);
        out.completed += 1;
      } catch (err) {
        out.errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  return out;
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export const elapsedMs = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

export const round = (n: number, digits = 2): number => Number(n.toFixed(digits));

export interface Figure {
  figure: string;
  value: number;
  unit: string;
  /** Target, e.g. { max: 5 } or { min: 1000 }; absent for context figures (baselines). */
  target?: { min?: number; max?: number };
}

const met = (f: Figure): boolean | null =>
  !f.target
    ? null
    : (f.target.min === undefined || f.value >= f.target.min) &&
      (f.target.max === undefined || f.value <= f.target.max);

/** The table: figure, value, target, met? (and how far from the target when missed). */
export function printTable(title: string, figures: Figure[]): void {
  const rows = figures.map((f) => {
    const target = !f.target
      ? '—'
      : f.target.min !== undefined
        ? `≥ ${f.target.min} ${f.unit}`.trim()
        : `≤ ${f.target.max} ${f.unit}`.trim();
    const ok = met(f);
    let verdict = ok === null ? '' : ok ? 'yes' : 'NO';
    if (ok === false) {
      const goal = f.target!.min ?? f.target!.max!;
      verdict += ` (${round(f.value / goal, 2)}× target)`;
    }
    return [f.figure, `${f.value} ${f.unit}`.trim(), target, verdict];
  });
  const header = ['figure', 'value', 'target', 'met?'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  console.log(`\n${title}\n`);
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(r));
  console.log('');
}

export const figuresJson = (figures: Figure[]) => figures.map((f) => ({ ...f, met: met(f) }));

export const machine = () => ({
  cores: os.cpus().length,
  load_average_1m: round(os.loadavg()[0]!, 2),
  cpu: os.cpus()[0]?.model ?? 'unknown',
  memory_gb: round(os.totalmem() / 2 ** 30, 1),
  node: process.version,
});

// ---- CPU accounting (Linux /proc; elsewhere the figures are null) ---------------------------

const CLOCK_TICKS = 100;

export function procStat(pid: string): { comm: string; ppid: string; self: number; children: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const f = text.slice(close + 2).split(' ');
    // fields after the comm: state ppid ... utime(12) stime(13) cutime(14) cstime(15)
    return {
      comm,
      ppid: f[1]!,
      self: (Number(f[11]) + Number(f[12])) / CLOCK_TICKS,
      children: (Number(f[13]) + Number(f[14])) / CLOCK_TICKS,
    };
  } catch {
    return null;
  }
}

function listPids(): string[] {
  try {
    return readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
}

export interface CpuSnapshot {
  wall: number;
  node: number;
  postgres: number | null;
  temporal: number | null;
  machine: number | null;
}

/**
 * CPU seconds used so far by this process, the local PostgreSQL (postmaster and backends,
 * exited backends included through the postmaster's children times), the Temporal dev server on
 * `temporalPort` and the whole machine. Other work on the machine (another test run on the same
 * PostgreSQL) would be counted too.
 */
export function cpuSnapshot(temporalPort = TEMPORAL_ADDRESS.split(':').pop()): CpuSnapshot {
  const own = process.cpuUsage();
  const snapshot: CpuSnapshot = {
    wall: Number(process.hrtime.bigint()) / 1e9,
    node: (own.user + own.system) / 1e6,
    postgres: null,
    temporal: null,
    machine: null,
  };
  const stats = new Map<string, NonNullable<ReturnType<typeof procStat>>>();
  for (const pid of listPids()) {
    const st = procStat(pid);
    if (st) stats.set(pid, st);
  }
  let postgres = 0;
  let found = false;
  for (const [, st] of stats) {
    if (st.comm !== 'postgres') continue;
    found = true;
    const parent = stats.get(st.ppid);
    postgres += st.self + (parent?.comm === 'postgres' ? 0 : st.children);
  }
  if (found) snapshot.postgres = postgres;
  if (temporalPort) {
    for (const [pid, st] of stats) {
      if (st.comm !== 'temporal') continue;
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const i = args.indexOf('--port');
        if (args.includes('start-dev') && i >= 0 && args[i + 1] === temporalPort) snapshot.temporal = st.self;
      } catch {
        // gone
      }
    }
  }
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait
    snapshot.machine = (cpu.reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!) / CLOCK_TICKS;
  } catch {
    // not Linux
  }
  return snapshot;
}

/**
 * CPU seconds between two snapshots, per component, and the wall time. `other_s` is what the
 * rest of the machine used meanwhile (other processes: a concurrent test run, say).
 */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot) {
  const d = (x: number | null, y: number | null) => (x === null || y === null ? null : round(y - x, 1));
  const node = round(b.node - a.node, 1);
  const postgres = d(a.postgres, b.postgres);
  const temporal = d(a.temporal, b.temporal);
  const busy = d(a.machine, b.machine);
  const wall = round(b.wall - a.wall, 1);
  return {
    wall_s: wall,
    available_s: round(wall * os.cpus().length, 1),
    machine_busy_s: busy,
    node_s: node,
    postgres_s: postgres,
    temporal_s: temporal,
    other_s: busy === null ? null : round(busy - node - (postgres ?? 0) - (temporal ?? 0), 1),
  };
}

/** Merges `value` under `key` into bench/results.json (other benchmarks' keys stay). */
export function writeResults(key: string, value: unknown): string {
  const file = path.join(ROOT, 'bench', 'results.json');
  let current: Record<string, unknown> = {};
  try {
    current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // missing or unreadable: start afresh
  }
  current[key] = value;
  writeFileSync(file, `${JSON.stringify(current, null, 2)}\n`);
  return file;
}

// ---- the agent of the execution and load benchmarks ----------------------------------------

/** One query placeholder and one similarity placeholder (k 5) over the pipeline. */
export const BENCH_AGENT = {
  prompt: [
    { role: 'system', template: 'Answer using only the reference text.' },
    { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}' },
  ],
  placeholders: [
    { name: 'question', type: 'query' },
    { name: 'context', type: 'similarity', target: 'question', params: { k: 5 } },
  ],
};

export interface AgentBench {
  pipelineId: string;
  llmId: string;
  agentId: string;
  documents: number;
  /** 64 questions from the corpus' vocabularies (another random stream than the documents). */
  questions: string[];
}

/**
 * Through the API: a `hash` embedding model of `dims`, a recursive splitter (1000), a pipeline
 * (`internal` includes `public`), `fragments` ~1 KB fragments of synthetic text (documents of 30
 * paragraphs, one fragment each, classifications alternating) ingested to the end, an LLM on the
 * fake model server and the agent `BENCH_AGENT`.
 */
export async function setupAgentBench(
  http: HttpClient,
  fake: FakeModelServer,
  options: { name: string; model: string; fragments: number; seed: number; dims: number },
): Promise<AgentBench> {
  const model = await http.expect<{ id: string }>(201, 'POST', '/embedding_models', {
    name: `bench-hash-${options.dims}`,
    provider: 'hash',
    size: options.dims,
  });
  const splitter = await http.expect<{ id: string }>(201, 'POST', '/text_splitters', {
    name: 'bench-1k',
    provider: 'recursive_character',
    parameters: { chunk_size: 1000, chunk_overlap: 0 },
  });
  const pipeline = await http.expect<{ id: string }>(201, 'POST', '/pipelines', {
    name: options.name,
    embedding_model_id: model.id,
    text_splitter_id: splitter.id,
    classifications: [{ name: 'internal', includes: ['public'] }, { name: 'public' }],
  });
  const llm = await http.expect<{ id: string }>(201, 'POST', '/llms', {
    name: 'bench-fake',
    endpoint: fake.url,
    model: options.model,
    api_key: 'sk-bench',
  });
  const agent = await http.expect<{ id: string }>(201, 'POST', '/agents', {
    name: options.name,
    ...BENCH_AGENT,
  });
  const corpusOptions = { seed: options.seed, topics: 20, wordsPerTopic: 100, commonWords: 500 };
  const corpus = new Corpus(corpusOptions);
  const documents: unknown[] = [];
  for (let fragments = 0, i = 0; fragments < options.fragments; i++) {
    const paragraphs = Math.min(30, options.fragments - fragments);
    const doc = corpus.document(paragraphs);
    documents.push({
      content: doc.content,
      classification: i % 2 === 0 ? 'internal' : 'public',
      metadata: { topic: doc.topic },
      external_id: `bench-${i}`,
    });
    fragments += paragraphs;
  }
  await http.expect(202, 'POST', `/pipelines/${pipeline.id}/documents:batch`, { documents });
  const unfinished = `/pipelines/${pipeline.id}/documents?status$in=pending,processing&limit=1`;
  for (let i = 0; ; i++) {
    const page = await http.expect<{ data: unknown[] }>(200, 'GET', unfinished);
    if (page.data.length === 0) break;
    if (i > 1200) throw new Error('ingestion did not finish in 4 minutes');
    await new Promise((r) => setTimeout(r, 200));
  }
  const failed = await http.expect<{ data: unknown[] }>(
    200,
    'GET',
    `/pipelines/${pipeline.id}/documents?status=failed&limit=1`,
  );
  if (failed.data.length > 0) throw new Error('some documents failed to ingest');
  // Same vocabularies, another random stream: queries apart from the documents.
  const queries = new Corpus(corpusOptions).reseed(options.seed + 1);
  return {
    pipelineId: pipeline.id,
    llmId: llm.id,
    agentId: agent.id,
    documents: documents.length,
    questions: Array.from({ length: 64 }, () => queries.query().text),
  };
}
