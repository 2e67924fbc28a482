// `npm run bench -- load [--clients N] [--duration S] [--mode agent|query] [--answer-words N]`
// (issue "Load"): N concurrent clients run streaming executions for a fixed time against the API
// and the worker as two production processes (dist/api/server.js, dist/worker.js) on a fresh
// database, the local Redis and Temporal, and the zero-latency fake model server in this process.
// Reports executions per second, time to first token p50/p95/p99, errors (must be 0), the RSS of
// the API and worker processes (sampled every second) and whether /readyz answered 200 throughout
// (polled every 500 ms), and model calls per execution (from the fake's log: above 1.00 without a
// fault, an execution paid the model twice). Exits 1 when an execution or a readiness check failed
// or an execution called the model more than once.
//  - agent mode (default): an agent with a query and a similarity placeholder (k 5) over a
//    pipeline of BENCH_FRAGMENTS fragments (hash embedder, 384 dims): the DESIGN §6 throughput case;
//  - query mode: direct LLM queries (POST /llms/{id}/query), no retrieval.
import { startFakeModelServer, type FakeModelServer } from '../test/fakes/fake-model-server';
import { setupAgentBench } from './lib/agent-setup';
import { log, nowMs } from './lib/env';
import { closedLoop } from './lib/closed-loop';
import { streamExecution, type HttpClient } from './lib/harness';
import { measurePhase } from './lib/load-phase';
import { figuresJson, machine, printTable, round, writeResults, type Figure } from './lib/report';
import { startAgentryStack } from './lib/stacks';
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

async function run(
  target: Target,
  apiUrl: string,
  pids: { api: number | undefined; worker: number | undefined },
  fake: FakeModelServer,
) {
  const once = (i: number) =>
    streamExecution(target.url, target.headers, target.bodies[i % target.bodies.length]);
  // Warm-up, not measured: connections, caches, the workflow cache, JIT.
  log(`warm-up: ${Math.min(settings.clients, 8) * 2} executions`);
  for (let round_ = 0; round_ < 2; round_++)
    await Promise.all(Array.from({ length: Math.min(settings.clients, 8) }, (_, i) => once(i)));
  fake.reset();
  // The fake records every request body: keep its memory flat, counting the model calls first
  // (issue 16: one call per execution unless an attempt really died; none dies here).
  let modelCalls = 0;
  const tally = () => {
    modelCalls += fake.requestsFor(MODEL).length;
    fake.reset();
  };
  const trim = setInterval(tally, 1000);
  log(`load: ${settings.clients} clients for ${settings.durationS} s (${settings.mode} executions)`);
  try {
    const phase = await measurePhase({ processes: pids, readyUrl: `${apiUrl}/readyz` }, () =>
      closedLoop(
        settings.clients,
        nowMs() + settings.durationS * 1000,
        () => interrupted,
        (c, i) => once(c * 7 + i),
      ),
    );
    tally();
    const executions = phase.completed + phase.errors;
    return {
      ...phase,
      model_calls: modelCalls,
      model_calls_per_execution: round(executions === 0 ? 0 : modelCalls / executions, 3),
    };
  } finally {
    clearInterval(trim);
  }
}

async function main(): Promise<void> {
  const started = nowMs();
  const answer = Array.from({ length: settings.answerWords }, (_, i) => `word${i}`).join(' ');
  const fake = await startFakeModelServer({ defaults: { deltaDelayMs: 0, text: answer } });
  let failed = false;
  try {
    const stack = await startAgentryStack('production', 'load');
    try {
      const target = await setup(stack.http, fake, stack.key);
      const pids = { api: stack.api.child.pid, worker: stack.worker.child.pid };
      const load = await run(target, stack.apiUrl, pids, fake);
      const readyz = load.readyz!;
      const figures: Figure[] = [
        {
          figure: `throughput (${settings.clients} clients, ${settings.mode})`,
          value: load.executions_per_s,
          unit: 'exec/s',
          ...(settings.mode === 'agent' ? { target: { min: 50 } } : {}),
        },
        { figure: 'errors', value: load.errors, unit: '', target: { max: 0 } },
        {
          figure: 'model calls per execution',
          value: load.model_calls_per_execution,
          unit: '',
          target: { max: 1 },
        },
        { figure: '/readyz non-200 answers', value: readyz.failures, unit: '', target: { max: 0 } },
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
        `${load.completed} executions in ${load.wall_s} s; /readyz polled ${readyz.checks} times ` +
          `(slowest ${readyz.maxMs} ms); RSS mean API ${load.rss.api?.mean_mb} MB, worker ${load.rss.worker?.mean_mb} MB; ` +
          `CPU s: API ${load.cpu.api_s}, worker ${load.cpu.worker_s}, bench+fake ${load.cpu.node_s}, ` +
          `postgres ${load.cpu.postgres_s}, temporal ${load.cpu.temporal_s}, other ${load.cpu.other_s} ` +
          `(machine busy ${load.cpu.machine_busy_s} of ${load.cpu.available_s})`,
      );
      if (load.errors > 0) console.log(`errors: ${load.first_errors.join(' | ')}`);
      if (readyz.failures > 0) console.log(`first /readyz failure: ${readyz.firstFailure}`);
      const file = writeResults('load', {
        date: new Date().toISOString(),
        machine: machine(),
        run_seconds: runSeconds,
        settings,
        ...load,
        figures: figuresJson(figures),
      });
      console.log(`\nwritten to ${file} (run time ${runSeconds} s)`);
      // A second model call without a fault is a customer paying twice (issue 16).
      failed = load.errors > 0 || readyz.failures > 0 || load.model_calls_per_execution > 1;
    } finally {
      await stack.stop();
    }
  } finally {
    await fake.close();
  }
  if (failed) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
