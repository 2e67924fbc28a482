// `npm run bench -- streams` (issue 25 item 6): many concurrent chats streaming paced answers. The
// fake model runs in a process of its own and paces its deltas (bench/lib/paced-model.ts); in one
// run, per scenario, closed-loop clients ask it directly (openai SDK, Responses protocol) and then
// through Agentry, every answer checked exact:
//  - S1: 300 clients, 50 deltas 100 ms apart;      - S2: 50 clients, 300 deltas 20 ms apart;
//  - S2-short: S2 with 60 deltas (the CPU per delta is the slope between the two lengths);
//  - S3: 1,000 clients, 60 deltas 250 ms apart, two rounds;
//  - E1: the quick start (dist/embedded.js with its own PGlite and in-process relay), 50 clients,
//    50 deltas 100 ms apart.
// S1–S3 run Agentry in production mode (API and worker as two processes) on a fresh database, a
// redis-server of the benchmark's own (its CPU apart) and the benchmark's Temporal dev server
// (heartbeats from its metrics). BENCH_AGENTRY_DIR measures another checkout's build. Settings:
// bench/README.md, "streams". Exits 1 on an error or an inexact answer.
import OpenAI from 'openai';
import path from 'node:path';
import { ROOT, envInt, log, nowMs } from './lib/env';
import { startPacedModel, type PacedModel } from './lib/paced-model';
import { startRedis } from './lib/redis-server';
import { figuresJson, machine, round, writeResults } from './lib/report';
import { startAgentryStack, type AgentryStack } from './lib/stacks';
import { SYSTEM, askAgentry, askDirect, runClients } from './lib/stream-clients';
import { TEMPORAL_METRICS_URL, redisCpu } from './lib/streams-meters';
import { measureColumn, type StreamScenario } from './lib/streams-phase';
import { selectedScenarios } from './lib/streams-scenarios';
import {
  comparison,
  cpuPerDelta,
  printStreams,
  printTargets,
  targetFigures,
  type ScenarioResult,
} from './lib/streams-report';

const settings = {
  scenarios: selectedScenarios(),
  durationS: envInt('BENCH_STREAMS_DURATION_S', 30),
  warmup: envInt('BENCH_STREAMS_WARMUP', 20, 0),
  timeoutS: envInt('BENCH_STREAMS_TIMEOUT_S', 600),
  agentryDir: path.resolve(process.env.BENCH_AGENTRY_DIR ?? ROOT),
};

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (interrupted = true));
const stop = () => interrupted;
const startedAt = nowMs();
const step = (message: string) => log(`${message} (at ${Math.round((nowMs() - startedAt) / 1000)} s)`);

const AGENT = {
  name: 'bench-streams',
  prompt: [
    { role: 'system', template: SYSTEM },
    { role: 'user', template: '{question}' },
  ],
  placeholders: [{ name: 'question', type: 'query' }],
};

/**
 * The agent, the (empty) pipeline an execution names, and one LLM per scenario (its model name
 * paces it) on a stack.
 */
async function setupAgentry(stack: AgentryStack, model: PacedModel, scenarios: StreamScenario[]) {
  const agent = await stack.http.expect<{ id: string }>(201, 'POST', '/agents', AGENT);
  const embedder = await stack.http.expect<{ id: string }>(201, 'POST', '/embedding_models', {
    name: 'bench-hash-8',
    provider: 'hash',
    size: 8,
  });
  const splitter = await stack.http.expect<{ id: string }>(201, 'POST', '/text_splitters', {
    name: 'bench-1k',
    provider: 'recursive_character',
    parameters: { chunk_size: 1000, chunk_overlap: 0 },
  });
  const pipeline = await stack.http.expect<{ id: string }>(201, 'POST', '/pipelines', {
    name: 'bench-streams',
    embedding_model_id: embedder.id,
    text_splitter_id: splitter.id,
    classifications: [{ name: 'internal' }],
  });
  const llms = new Map<string, string>();
  for (const s of [...scenarios, WARMUP]) {
    const llm = await stack.http.expect<{ id: string }>(201, 'POST', '/llms', {
      name: `bench-streams-${s.id}`,
      endpoint: model.url,
      model: `streams-${s.id}`,
      api_key: 'sk-bench',
    });
    llms.set(s.id, llm.id);
  }
  return (s: StreamScenario) => (q: string) =>
    askAgentry(
      `${stack.apiUrl}/agents/${agent.id}/execute`,
      { ...stack.key, 'x-pipeline-id': pipeline.id, 'x-llm-id': llms.get(s.id)! },
      q,
      settings.timeoutS * 1000,
    );
}

const WARMUP: StreamScenario = {
  id: 'warmup',
  label: 'warm-up',
  clients: 1,
  deltas: 10,
  delayMs: 10,
  rounds: 1,
  stack: 'production',
};

async function runStack(
  kind: StreamScenario['stack'],
  scenarios: StreamScenario[],
  model: PacedModel,
  direct: OpenAI,
): Promise<ScenarioResult[]> {
  const redis = kind === 'production' ? await startRedis() : null;
  const redisMeter = redis ? await redisCpu(redis.url) : null;
  const results: ScenarioResult[] = [];
  try {
    step(`starting Agentry (${kind}) from ${settings.agentryDir}`);
    const stack = await startAgentryStack(
      kind,
      `streams-${kind}`,
      {},
      {
        root: settings.agentryDir,
        ownStores: kind === 'embedded',
        ...(redis ? { env: { REDIS_URL: redis.url } } : {}),
      },
    );
    try {
      const agentryFor = await setupAgentry(stack, model, scenarios);
      const processes =
        kind === 'production'
          ? { api: stack.api.child.pid, worker: stack.worker.child.pid }
          : { embedded: stack.api.child.pid };
      if (settings.warmup > 0) {
        step(`warm-up: ${settings.warmup} executions`);
        const warm = agentryFor(WARMUP);
        const w = await runClients(
          settings.warmup,
          { rounds: 1, deadline: 0 },
          stop,
          (c) => `warm${c}`,
          10,
          warm,
        );
        if (w.errors.length) throw new Error(`warm-up failed: ${w.errors[0]}`);
      }
      for (const scenario of scenarios) {
        if (interrupted) break;
        await model.script(`streams-${scenario.id}`, scenario.delayMs);
        const result: ScenarioResult = { scenario };
        const common = { scenario, model, durationS: settings.durationS, stop };
        step(
          `${scenario.id} direct: ${scenario.clients} clients, ${scenario.deltas} deltas ${scenario.delayMs} ms apart`,
        );
        result.direct = await measureColumn({
          ...common,
          column: 'direct',
          processes: {},
          ask: (q) => askDirect(direct, `streams-${scenario.id}`, q),
        });
        step(`${scenario.id} Agentry (${kind})`);
        result.agentry = await measureColumn({
          ...common,
          column: 'agentry',
          processes,
          ...(redisMeter ? { redisCpu: redisMeter.seconds } : {}),
          // Embedded, the quick start's PGlite runs in its one process.
          ...(kind === 'production' ? { database: stack.databaseName } : {}),
          ask: agentryFor(scenario),
        });
        const c = comparison(result);
        step(
          `${scenario.id}: ${result.agentry.answers} answers, ${result.agentry.errors} errors, ` +
            `${c.answers_per_s_ratio}× direct, added first token p50 ${c.added_ttft_p50_ms} ms`,
        );
        results.push(result);
      }
    } finally {
      await stack.stop();
    }
  } finally {
    await redisMeter?.close();
    await redis?.stop();
  }
  return results;
}

async function main(): Promise<void> {
  step(
    `streams: ${settings.scenarios.map((s) => `${s.id} (${s.clients} clients)`).join(', ')}; ` +
      `${settings.durationS} s per timed column; Agentry from ${settings.agentryDir}`,
  );
  if (!TEMPORAL_METRICS_URL) log('no BENCH_TEMPORAL_METRICS_URL: heartbeats are not counted');
  const model = await startPacedModel();
  await model.script(`streams-${WARMUP.id}`, WARMUP.delayMs);
  const direct = new OpenAI({
    apiKey: 'sk-bench',
    baseURL: model.url,
    maxRetries: 0,
    timeout: settings.timeoutS * 1000,
  });
  const results: ScenarioResult[] = [];
  try {
    for (const kind of ['production', 'embedded'] as const) {
      const scenarios = settings.scenarios.filter((s) => s.stack === kind);
      if (scenarios.length && !interrupted) results.push(...(await runStack(kind, scenarios, model, direct)));
    }
  } finally {
    await model.close();
  }
  const by = (id: string) => results.find((r) => r.scenario.id === id);
  const perDelta = cpuPerDelta(by('S2'), by('S2-short'));
  printStreams(results, perDelta);
  const figures = targetFigures(results, perDelta);
  printTargets(figures);
  const runSeconds = round((nowMs() - startedAt) / 1000, 1);
  const file = writeResults('streams', {
    date: new Date().toISOString(),
    machine: machine(),
    run_seconds: runSeconds,
    agentry_dir: settings.agentryDir,
    settings: { ...settings, temporal_metrics: TEMPORAL_METRICS_URL || null },
    scenarios: Object.fromEntries(results.map((r) => [r.scenario.id, { ...r, comparison: comparison(r) }])),
    cpu_per_delta: perDelta,
    figures: figuresJson(figures),
  });
  console.log(
    `\nwritten to ${file} (run time ${runSeconds} s; 1-minute load now ${machine().load_average_1m})`,
  );
  const bad = results.some((r) => [r.direct, r.agentry].some((c) => c && c.errors + c.inexact > 0));
  if (bad || interrupted) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
