// `npm run bench -- streams` (issues 25 and 35): many concurrent chats streaming paced answers.
// The fake model runs in a process of its own and paces its deltas (bench/lib/paced-model.ts); in
// one run, per scenario, closed-loop clients ask it directly (openai SDK, Responses protocol),
// then through the bare-Temporal floor (bench/lib/stream-floor.ts: one workflow, one activity
// streaming the model into pub/sub, a node:http API), then through Agentry, every answer checked
// exact:
//  - S1: 300 clients, 50 deltas 100 ms apart;      - S2: 50 clients, 300 deltas 20 ms apart;
//  - S2-short: S2 with 60 deltas (the CPU per delta is the slope between the two lengths);
//  - S3: 1,000 clients, 60 deltas 250 ms apart, two rounds;
//  - E1: the quick start (dist/embedded.js with its own PGlite and in-process relay), 50 clients,
//    50 deltas 100 ms apart, against the floor's embedded variant (one process, an EventEmitter).
// S1–S3 run Agentry in production mode (API and worker as two processes) on a fresh database and
// the floor as two processes, both on a redis-server of the benchmark's own (its CPU apart) and
// the benchmark's Temporal dev server (heartbeats from its metrics). BENCH_AGENTRY_DIR measures
// another checkout's build. Settings: bench/README.md, "streams". Exits 1 on an error or an
// inexact answer.
import OpenAI from 'openai';
import path from 'node:path';
import { ROOT, envInt, log, nowMs } from './lib/env';
import { startPacedModel, type PacedModel } from './lib/paced-model';
import { startRedis } from './lib/redis-server';
import { figuresJson, machine, round, writeResults } from './lib/report';
import { startAgentryStack } from './lib/stacks';
import { askDirect, runClients } from './lib/stream-clients';
import { startStreamFloor } from './lib/stream-floor';
import { FLOOR_SETTINGS } from './lib/stream-floor-settings';
import { WARMUP, agentryColumn, floorColumn, type StackColumn } from './lib/streams-agentry';
import { TEMPORAL_METRICS_URL, redisCpu } from './lib/streams-meters';
import { measureColumn, type StreamScenario } from './lib/streams-phase';
import { selectedScenarios } from './lib/streams-scenarios';
import { comparison, cpuPerDelta, printStreams, signedMs, type ScenarioResult } from './lib/streams-report';
import { printFloorComparison, printTargets, targetFigures } from './lib/streams-targets';

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

/** Warms a column up with `settings.warmup` short executions. */
async function warmUp(column: StackColumn): Promise<void> {
  if (settings.warmup === 0) return;
  step(`warm-up: ${settings.warmup} executions (${column.column})`);
  const w = await runClients(
    settings.warmup,
    { rounds: 1, deadline: 0 },
    stop,
    (c) => `warm${column.column[0]}${c}`,
    WARMUP.deltas,
    column.askFor(WARMUP),
  );
  if (w.errors.length) throw new Error(`${column.column} warm-up failed: ${w.errors[0]}`);
}

/** Per scenario: direct, the floor and Agentry, one after the other. */
async function runScenarios(
  scenarios: StreamScenario[],
  columns: StackColumn[],
  model: PacedModel,
  direct: OpenAI,
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const column of columns) await warmUp(column);
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
    for (const column of columns) {
      if (interrupted) break;
      step(`${scenario.id} ${column.column} (${scenario.stack})`);
      result[column.column] = await measureColumn({ ...common, ...column, ask: column.askFor(scenario) });
    }
    const c = comparison(result);
    step(
      `${scenario.id}: ${result.agentry?.answers} answers, ${result.agentry?.errors} errors; ` +
        `Agentry ÷ floor ${c.floor.answers_per_s_ratio}× answers/s, first token p50 ${signedMs(c.floor.ttft_p50_ms)}`,
    );
    results.push(result);
  }
  return results;
}

async function runStack(
  kind: StreamScenario['stack'],
  scenarios: StreamScenario[],
  model: PacedModel,
  direct: OpenAI,
): Promise<ScenarioResult[]> {
  const redis = kind === 'production' ? await startRedis() : null;
  const redisMeter = redis ? await redisCpu(redis.url) : null;
  const timeoutMs = settings.timeoutS * 1000;
  try {
    step(`starting Agentry (${kind}) from ${settings.agentryDir} and the floor (${kind})`);
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
      const floor = await startStreamFloor(kind, model.url, redis?.url);
      try {
        const columns = [
          floorColumn(floor, timeoutMs, redisMeter?.seconds),
          await agentryColumn(stack, model, scenarios, timeoutMs, redisMeter?.seconds),
        ];
        return await runScenarios(scenarios, columns, model, direct);
      } finally {
        await floor.stop();
      }
    } finally {
      await stack.stop();
    }
  } finally {
    await redisMeter?.close();
    await redis?.stop();
  }
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
  printFloorComparison(results);
  const figures = targetFigures(results, perDelta);
  printTargets(figures);
  const runSeconds = round((nowMs() - startedAt) / 1000, 1);
  const file = writeResults('streams', {
    date: new Date().toISOString(),
    machine: machine(),
    run_seconds: runSeconds,
    agentry_dir: settings.agentryDir,
    settings: { ...settings, temporal_metrics: TEMPORAL_METRICS_URL || null },
    floor_settings: FLOOR_SETTINGS,
    scenarios: Object.fromEntries(results.map((r) => [r.scenario.id, { ...r, comparison: comparison(r) }])),
    cpu_per_delta: perDelta,
    figures: figuresJson(figures),
  });
  console.log(
    `\nwritten to ${file} (run time ${runSeconds} s; 1-minute load now ${machine().load_average_1m})`,
  );
  const bad = results.some((r) => [r.direct, r.floor, r.agentry].some((c) => c && c.errors + c.inexact > 0));
  if (bad || interrupted) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
