// `npm run bench -- load [--clients N] [--duration S] [--mode agent|query] [--answer-words N]`
// (issue "Load"): N concurrent clients run streaming executions for a fixed time against the API
// and the worker as two production processes (dist/api/server.js, dist/worker.js) on a fresh
// database, the local Redis and Temporal, and the zero-latency fake model server in this process.
// Reports executions per second, time to first token p50/p95/p99, errors (must be 0), the RSS of
// the API and worker processes (sampled every second) and whether /readyz answered 200 throughout
// (polled every 500 ms). Exits 1 when an execution or a readiness check failed.
//  - agent mode (default): an agent with a query and a similarity placeholder (k 5) over a
//    pipeline of BENCH_FRAGMENTS fragments (hash embedder, 384 dims): the DESIGN §6 throughput case;
//  - query mode: direct LLM queries (POST /llms/{id}/query), no retrieval.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { startFakeModelServer, type FakeModelServer } from '../test/fakes/fake-model-server';
import {
  HttpClient,
  REDIS_URL,
  ROOT,
  TEMPORAL_ADDRESS,
  admin,
  closedLoop,
  cpuBetween,
  cpuSnapshot,
  databaseUrl,
  figuresJson,
  log,
  machine,
  nowMs,
  percentile,
  printTable,
  procStat,
  round,
  setupAgentBench,
  streamExecution,
  writeResults,
  type Figure,
} from './lib/harness';
import { Corpus } from './lib/synthetic';

const DIMS = 384;
const MODEL = 'bench-load-model';

// ---- settings: flags win over BENCH_* variables ----------------------------------------------

function flag(name: string): string | undefined {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === `--${name}`) return args[i + 1];
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

function setting(name: string, env: string, fallback: number, min: number, max: number): number {
  const raw = flag(name) ?? process.env[env];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`--${name} / ${env} must be an integer from ${min} to ${max} (got "${raw}")`);
  return n;
}

const KNOWN_FLAGS = ['clients', 'duration', 'mode', 'answer-words', 'fragments', 'seed'];
for (const arg of process.argv.slice(2)) {
  const name = /^--([a-z-]+)/.exec(arg)?.[1];
  if (arg.startsWith('--') && (!name || !KNOWN_FLAGS.includes(name)))
    throw new Error(`unknown flag ${arg} (known: ${KNOWN_FLAGS.map((f) => `--${f}`).join(', ')})`);
}

const mode = flag('mode') ?? process.env.BENCH_MODE ?? 'agent';
if (mode !== 'agent' && mode !== 'query') throw new Error(`--mode must be agent or query (got "${mode}")`);

const settings = {
  mode,
  clients: setting('clients', 'BENCH_CLIENTS', 32, 1, 1000),
  durationS: setting('duration', 'BENCH_DURATION_S', 60, 1, 3600),
  answerWords: setting('answer-words', 'BENCH_ANSWER_WORDS', 50, 1, 10_000),
  fragments: setting('fragments', 'BENCH_FRAGMENTS', 300, 1, 100_000),
  seed: setting('seed', 'BENCH_SEED', 42, 0, 2 ** 31),
};

// ---- the two processes ---------------------------------------------------------------------

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Proc {
  name: string;
  child: ChildProcess;
  logFile: string;
  stop(): Promise<void>;
}

/** Starts `node dist/<script>`, its output to a log file; resolves once `ready` answers 200. */
async function startProcess(
  name: string,
  script: string,
  env: Record<string, string>,
  ready: string,
  stateDir: string,
): Promise<Proc> {
  const logFile = path.join(stateDir, `${name}.log`);
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', out, out],
  });
  const proc: Proc = {
    name,
    child,
    logFile,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 40_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}; see ${logFile}`);
    try {
      if ((await fetch(ready, { signal: AbortSignal.timeout(1000) })).ok) return proc;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await proc.stop();
  throw new Error(`${name} was not ready within 60 s; see ${logFile}`);
}

/** Resident set size of a process in bytes (Linux /proc), or null. */
function rssBytes(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

const cpuSeconds = (pid: number | undefined): number | null =>
  pid ? (procStat(String(pid))?.self ?? null) : null;

// ---- setup through the API -----------------------------------------------------------------

interface Target {
  url: string;
  headers: Record<string, string>;
  bodies: unknown[];
}

async function setup(http: HttpClient, fake: FakeModelServer, key: Record<string, string>): Promise<Target> {
  if (settings.mode === 'agent') {
    const s = await setupAgentBench(http, fake, {
      name: 'bench-load',
      model: MODEL,
      fragments: settings.fragments,
      seed: settings.seed,
      dims: DIMS,
    });
    log(`agent ready: ${s.documents} documents, ${settings.fragments} fragments`);
    return {
      url: `${http.baseUrl}/agents/${s.agentId}/execute`,
      headers: { ...key, 'x-pipeline-id': s.pipelineId, 'x-llm-id': s.llmId },
      bodies: s.questions.map((question) => ({ prompt: { question }, classification: 'internal' })),
    };
  }
  const llm = await http.expect<{ id: string }>(201, 'POST', '/llms', {
    name: 'bench-load-fake',
    endpoint: fake.url,
    model: MODEL,
    api_key: 'sk-bench',
  });
  const queries = new Corpus({ seed: settings.seed, topics: 20, wordsPerTopic: 100, commonWords: 500 });
  return {
    url: `${http.baseUrl}/llms/${llm.id}/query`,
    headers: key,
    bodies: Array.from({ length: 64 }, () => ({
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: queries.query().text },
      ],
    })),
  };
}

// ---- the load ------------------------------------------------------------------------------

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (interrupted = true));

interface Samples {
  at: number;
  api: number | null;
  worker: number | null;
}

async function run(target: Target, apiUrl: string, api: Proc, worker: Proc, fake: FakeModelServer) {
  const once = (i: number) =>
    streamExecution(target.url, target.headers, target.bodies[i % target.bodies.length]);
  // Warm-up, not measured: connections, caches, the workflow cache, JIT.
  log(`warm-up: ${Math.min(settings.clients, 8) * 2} executions`);
  for (let round_ = 0; round_ < 2; round_++)
    await Promise.all(Array.from({ length: Math.min(settings.clients, 8) }, (_, i) => once(i)));
  fake.reset();

  const rss: Samples[] = [];
  const readiness = { checks: 0, failures: 0, maxMs: 0, firstFailure: '' };
  let stopSampling = false;

  const sampler = (async () => {
    while (!stopSampling) {
      rss.push({ at: nowMs(), api: rssBytes(api.child.pid), worker: rssBytes(worker.child.pid) });
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  const readyPoller = (async () => {
    while (!stopSampling) {
      const t = nowMs();
      let status = 0;
      try {
        status = (await fetch(`${apiUrl}/readyz`, { signal: AbortSignal.timeout(5000) })).status;
      } catch (err) {
        readiness.firstFailure ||= (err as Error).message;
      }
      readiness.checks += 1;
      readiness.maxMs = Math.max(readiness.maxMs, nowMs() - t);
      if (status !== 200) {
        readiness.failures += 1;
        readiness.firstFailure ||= `status ${status}`;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  // The fake records every request body: keep its memory flat.
  const trim = setInterval(() => fake.reset(), 1000);

  log(`load: ${settings.clients} clients for ${settings.durationS} s (${settings.mode} executions)`);
  const before = {
    cpu: cpuSnapshot(),
    api: cpuSeconds(api.child.pid),
    worker: cpuSeconds(worker.child.pid),
  };
  const start = nowMs();
  const deadline = start + settings.durationS * 1000;
  const { ttft, total, errors, completed } = await closedLoop(
    settings.clients,
    deadline,
    () => interrupted,
    (c, i) => once(c * 7 + i),
  );
  const wallS = (nowMs() - start) / 1000;
  const cpu = cpuBetween(before.cpu, cpuSnapshot());
  const cpuOf = (b: number | null, pid: number | undefined) => {
    const a = cpuSeconds(pid);
    return a === null || b === null ? null : round(a - b, 1);
  };
  const processCpu = {
    api_s: cpuOf(before.api, api.child.pid),
    worker_s: cpuOf(before.worker, worker.child.pid),
  };
  stopSampling = true;
  clearInterval(trim);
  await Promise.all([sampler, readyPoller]);

  const mb = (bytes: number) => round(bytes / 2 ** 20, 1);
  const series = (pick: (s: Samples) => number | null) =>
    rss.map(pick).filter((v): v is number => v !== null);
  const stats = (values: number[]) =>
    values.length === 0
      ? null
      : {
          max_mb: mb(Math.max(...values)),
          mean_mb: mb(values.reduce((a, b) => a + b, 0) / values.length),
          last_mb: mb(values[values.length - 1]!),
        };
  const summary = (samples: number[]) => ({
    n: samples.length,
    p50: round(percentile(samples, 50)),
    p95: round(percentile(samples, 95)),
    p99: round(percentile(samples, 99)),
    max: round(samples.length ? Math.max(...samples) : NaN),
  });
  return {
    wall_s: round(wallS, 2),
    completed,
    errors: errors.length,
    first_errors: [...new Set(errors)].slice(0, 5),
    executions_per_s: round(completed / wallS, 1),
    ttft_ms: summary(ttft),
    total_ms: summary(total),
    rss: {
      samples: rss.length,
      api: stats(series((s) => s.api)),
      worker: stats(series((s) => s.worker)),
      sum_max_mb: mb(Math.max(0, ...rss.map((s) => (s.api ?? 0) + (s.worker ?? 0)))),
    },
    readyz: { ...readiness, maxMs: round(readiness.maxMs), always_200: readiness.failures === 0 },
    cpu: { ...cpu, ...processCpu },
  };
}

async function main(): Promise<void> {
  const started = nowMs();
  const suffix = randomBytes(4).toString('hex');
  const stateDir = path.join(ROOT, 'bench', '.state', `load-${suffix}`);
  mkdirSync(stateDir, { recursive: true });
  const databaseName = `agentry_bench_load_${suffix}`;
  const keyId = randomUUID();
  const keySecret = randomBytes(24).toString('base64url');
  const [apiPort, metricsPort] = [await freePort(), await freePort()];
  const env: Record<string, string> = {
    AGENTRY_LOG_LEVEL: 'info',
    ...(process.env as Record<string, string>),
    DATABASE_URL: databaseUrl(databaseName),
    REDIS_URL,
    TEMPORAL_ADDRESS,
    AGENTRY_APPLICATION_SECRET: randomBytes(32).toString('hex'),
    AGENTRY_ADMIN_KEY_ID: keyId,
    AGENTRY_ADMIN_KEY_SECRET: keySecret,
    AGENTRY_REDIS_PREFIX: `agentry-bench-${suffix}:`,
    AGENTRY_TASK_QUEUE: `bench-load-${suffix}`,
    AGENTRY_WORKFLOW_BUNDLE: path.join(ROOT, 'dist', 'workflow-bundle.js'),
    AGENTRY_WORKER_METRICS_PORT: String(metricsPort),
    PORT: String(apiPort),
    HOST: '127.0.0.1',
  };
  const answer = Array.from({ length: settings.answerWords }, (_, i) => `word${i}`).join(' ');
  const fake = await startFakeModelServer({ defaults: { deltaDelayMs: 0, text: answer } });
  await admin(`CREATE DATABASE ${databaseName}`);
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const procs: Proc[] = [];
  let failed = false;
  try {
    // The API first: it migrates the fresh database before the worker connects.
    procs.push(await startProcess('api', 'api/server.js', env, `${apiUrl}/readyz`, stateDir));
    procs.push(
      await startProcess('worker', 'worker.js', env, `http://127.0.0.1:${metricsPort}/metrics`, stateDir),
    );
    const [api, worker] = procs as [Proc, Proc];
    log(`API pid ${api.child.pid} on :${apiPort}, worker pid ${worker.child.pid}; logs in ${stateDir}`);
    const http = new HttpClient(apiUrl, keyId, keySecret);
    const target = await setup(http, fake, { 'x-api-key': keyId, 'x-api-key-secret': keySecret });
    const load = await run(target, apiUrl, api, worker, fake);

    const figures: Figure[] = [
      {
        figure: `throughput (${settings.clients} clients, ${settings.mode})`,
        value: load.executions_per_s,
        unit: 'exec/s',
        ...(settings.mode === 'agent' ? { target: { min: 100 } } : {}),
      },
      { figure: 'errors', value: load.errors, unit: '', target: { max: 0 } },
      { figure: '/readyz non-200 answers', value: load.readyz.failures, unit: '', target: { max: 0 } },
      { figure: 'TTFT p50', value: load.ttft_ms.p50, unit: 'ms' },
      { figure: 'TTFT p95', value: load.ttft_ms.p95, unit: 'ms' },
      { figure: 'TTFT p99', value: load.ttft_ms.p99, unit: 'ms' },
      { figure: 'execution total p50', value: load.total_ms.p50, unit: 'ms' },
      { figure: 'RSS API max', value: load.rss.api?.max_mb ?? NaN, unit: 'MB' },
      { figure: 'RSS worker max', value: load.rss.worker?.max_mb ?? NaN, unit: 'MB' },
      { figure: 'RSS API + worker max', value: load.rss.sum_max_mb, unit: 'MB', target: { max: 400 } },
    ];
    const runSeconds = round((nowMs() - started) / 1000, 1);
    printTable(
      `load: ${settings.clients} concurrent streaming ${settings.mode} executions for ${settings.durationS} s, ` +
        `${settings.answerWords}-word answers, zero-latency fake model, API and worker as separate processes`,
      figures,
    );
    console.log(
      `${load.completed} executions in ${load.wall_s} s; /readyz polled ${load.readyz.checks} times ` +
        `(slowest ${load.readyz.maxMs} ms); RSS mean API ${load.rss.api?.mean_mb} MB, worker ${load.rss.worker?.mean_mb} MB; ` +
        `CPU s: API ${load.cpu.api_s}, worker ${load.cpu.worker_s}, bench+fake ${load.cpu.node_s}, ` +
        `postgres ${load.cpu.postgres_s}, temporal ${load.cpu.temporal_s}, other ${load.cpu.other_s} ` +
        `(machine busy ${load.cpu.machine_busy_s} of ${load.cpu.available_s})`,
    );
    if (load.errors > 0) console.log(`errors: ${load.first_errors.join(' | ')}`);
    if (load.readyz.failures > 0) console.log(`first /readyz failure: ${load.readyz.firstFailure}`);
    const file = writeResults('load', {
      date: new Date().toISOString(),
      machine: machine(),
      run_seconds: runSeconds,
      settings,
      ...load,
      figures: figuresJson(figures),
    });
    console.log(`\nwritten to ${file} (run time ${runSeconds} s)`);
    failed = load.errors > 0 || load.readyz.failures > 0;
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await fake.close();
    if (process.env.BENCH_KEEP_DB === '1') log(`database kept: ${databaseName}`);
    else await admin(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  }
  if (failed) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
