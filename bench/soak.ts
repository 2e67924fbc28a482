// `npm run bench -- soak` (issue 16): first measures the throughput of BENCH_CLIENTS (32) closed-loop
// clients for BENCH_CALIBRATE_S (30) seconds, then runs executions open-loop at half that rate for
// BENCH_SOAK_MINUTES (30) against the API and the worker as two production processes (as `load`:
// the agent over 300 fragments, the zero-latency fake model in this process; the worker's heap
// limited as docker-compose.yml does, BENCH_WORKER_NODE_OPTIONS to change). Every 10 s it samples
// the RSS, V8 heap in use and open file descriptors of both processes, Redis's used memory and the keys under the
// stack's prefix (and how many of them never expire), and the PostgreSQL connections to the
// stack's database. Reports each at the start and the end with its slope over the last two thirds
// (the first third is warm-up: caches, pools, JIT), and exits 1 when one grows without bound:
//  - RSS, heap or descriptors grow over the last two thirds by more than 10 % of their level (at
//    least 16 MB, 8 descriptors); PostgreSQL connections exceed the two pools (2 ×
//    AGENTRY_DB_POOL_MAX);
//  - a key without an expiry appears (relay logs live 1 h after their last event, SPEC §9.6, so
//    a run shorter than that sees Redis grow by design; a key that never expires is the leak);
//  - an execution failed, started more than 1 s after its scheduled time, or called the model
//    more than once.
import { readdirSync } from 'node:fs';
import { Client as PgClient } from 'pg';
import { createClient } from 'redis';
import { startFakeModelServer } from '../test/fakes/fake-model-server';
import { setupAgentBench } from './lib/agent-setup';
import { closedLoop } from './lib/closed-loop';
import { rssBytes } from './lib/cpu';
import { ADMIN_DATABASE_URL, REDIS_URL, envInt, log, nowMs } from './lib/env';
import { streamExecution } from './lib/harness';
import { figuresJson, machine, printRows, printTable, round, writeResults, type Figure } from './lib/report';
import { startAgentryStack, type AgentryStack } from './lib/stacks';

const MODEL = 'bench-soak-model';
const DIMS = 384;
const SAMPLE_EVERY_MS = 10_000;
const WORKER_NODE_OPTIONS = process.env.BENCH_WORKER_NODE_OPTIONS ?? '--max-old-space-size=1024';
/** An execution that starts later than this after its scheduled time counts as late. */
const LATE_MS = 1000;

const settings = {
  clients: envInt('BENCH_CLIENTS', 32),
  calibrateS: envInt('BENCH_CALIBRATE_S', 30),
  minutes: envInt('BENCH_SOAK_MINUTES', 30),
  answerWords: envInt('BENCH_ANSWER_WORDS', 50),
  fragments: envInt('BENCH_FRAGMENTS', 300),
};

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (interrupted = true));

interface Sample {
  atS: number;
  api_rss_mb: number;
  worker_rss_mb: number;
  /** V8 heap in use (prom-client's nodejs_heap_size_used_bytes of each process). */
  api_heap_mb: number;
  worker_heap_mb: number;
  api_fds: number;
  worker_fds: number;
  redis_used_mb: number;
  redis_keys: number;
  redis_keys_without_expiry: number;
  pg_connections: number;
}

/** A sample of a Prometheus text exposition whose name ends with `suffix` (NaN when absent). */
async function metric(url: string, suffix: string): Promise<number> {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => !l.startsWith('#') && l.split(' ')[0]!.endsWith(suffix));
  return line ? Number(line.split(' ').pop()) : NaN;
}

const openFds = (pid: number | undefined): number => (pid ? readdirSync(`/proc/${pid}/fd`).length : NaN);
const mb = (bytes: number | null): number => round((bytes ?? NaN) / 2 ** 20, 1);

/** Least-squares slope of `values` over `times` (per unit of time). */
function slope(times: number[], values: number[]): number {
  const n = times.length;
  const mt = times.reduce((a, b) => a + b, 0) / n;
  const mv = values.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (times[i]! - mt) * (values[i]! - mv);
    den += (times[i]! - mt) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

async function sampler(stack: AgentryStack, startedAt: number) {
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  const pg = new PgClient({ connectionString: ADMIN_DATABASE_URL });
  await pg.connect();
  return {
    async sample(): Promise<Sample> {
      let keys = 0;
      let withoutExpiry = 0;
      for await (const batch of redis.scanIterator({ MATCH: `${stack.redisPrefix}*`, COUNT: 1000 })) {
        const names = Array.isArray(batch) ? batch : [batch];
        keys += names.length;
        const ttls = await Promise.all(names.map((k) => redis.pTTL(k)));
        withoutExpiry += ttls.filter((t) => t === -1).length;
      }
      const memory = await redis.info('memory');
      const used = Number(/used_memory:(\d+)/.exec(memory)?.[1] ?? NaN);
      const { rows } = await pg.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
        [stack.databaseName],
      );
      const [apiHeap, workerHeap] = await Promise.all(
        [stack.metricsUrls.api, stack.metricsUrls.worker].map((url) =>
          metric(url, 'nodejs_heap_size_used_bytes'),
        ),
      );
      return {
        atS: round((nowMs() - startedAt) / 1000, 1),
        api_heap_mb: mb(apiHeap ?? NaN),
        worker_heap_mb: mb(workerHeap ?? NaN),
        api_rss_mb: mb(rssBytes(stack.api.child.pid)),
        worker_rss_mb: mb(rssBytes(stack.worker.child.pid)),
        api_fds: openFds(stack.api.child.pid),
        worker_fds: openFds(stack.worker.child.pid),
        redis_used_mb: mb(used),
        redis_keys: keys,
        redis_keys_without_expiry: withoutExpiry,
        pg_connections: rows[0]!.n,
      };
    },
    async close() {
      await Promise.all([redis.close(), pg.end()]);
    },
  };
}

/**
 * How each resource is judged: growth over the last two thirds within a share of its level (at
 * least a floor); never above its first sample, or a fixed bound; or shown only (it grows by
 * design).
 */
type Rule =
  | { growth: { share: number; floor: number } }
  | 'never above start'
  | { atMost: number; why: string }
  | 'by design';
/** The API's and the worker's pools (AGENTRY_DB_POOL_MAX each): connections rise and fall within them. */
const POOLS = 2 * envInt('AGENTRY_DB_POOL_MAX', 10);
const RULES: Record<Exclude<keyof Sample, 'atS'>, Rule> = {
  api_rss_mb: { growth: { share: 0.1, floor: 16 } },
  worker_rss_mb: { growth: { share: 0.1, floor: 16 } },
  api_heap_mb: { growth: { share: 0.1, floor: 16 } },
  worker_heap_mb: { growth: { share: 0.1, floor: 16 } },
  api_fds: { growth: { share: 0.1, floor: 8 } },
  worker_fds: { growth: { share: 0.1, floor: 8 } },
  pg_connections: { atMost: POOLS, why: 'the two pools' },
  // Relay logs live 1 h after their last event (SPEC §9.6): a shorter run sees these grow.
  redis_used_mb: 'by design',
  redis_keys: 'by design',
  redis_keys_without_expiry: 'never above start',
};

async function main(): Promise<void> {
  const started = nowMs();
  const answer = Array.from({ length: settings.answerWords }, (_, i) => `word${i}`).join(' ');
  const fake = await startFakeModelServer({ defaults: { deltaDelayMs: 0, text: answer } });
  let failed = false;
  // The worker's heap as docker-compose.yml sets it: Node would otherwise size it from the
  // machine (4 GB here) and let it grow lazily, which reads as growth in a 30-minute run.
  const stack = await startAgentryStack('production', 'soak', { NODE_OPTIONS: WORKER_NODE_OPTIONS });
  try {
    const s = await setupAgentBench(stack.http, fake, {
      name: 'bench-soak',
      model: MODEL,
      fragments: settings.fragments,
      seed: 42,
      dims: DIMS,
    });
    const url = `${stack.apiUrl}/agents/${s.agentId}/execute`;
    const headers = { ...stack.key, 'x-pipeline-id': s.pipelineId, 'x-llm-id': s.llmId };
    const once = (i: number) =>
      streamExecution(url, headers, {
        prompt: { question: s.questions[i % s.questions.length] },
        classification: 'internal',
      });
    let modelCalls = 0;
    const tally = () => {
      modelCalls += fake.requestsFor(MODEL).length;
      fake.reset();
    };
    const trim = setInterval(tally, 1000);

    log(`calibration: ${settings.clients} clients for ${settings.calibrateS} s`);
    const calibration = await closedLoop(
      settings.clients,
      nowMs() + settings.calibrateS * 1000,
      () => interrupted,
      (c, i) => once(c * 7 + i),
    );
    const throughput = calibration.completed / settings.calibrateS;
    if (!(throughput > 0))
      throw new Error(`calibration completed no execution (${calibration.errors[0] ?? 'no error'})`);
    const rate = throughput / 2;
    log(
      `throughput ${round(throughput, 1)} exec/s; soak at ${round(rate, 2)} exec/s for ${settings.minutes} min`,
    );
    tally();
    modelCalls = 0;

    const soakStart = nowMs();
    const probe = await sampler(stack, soakStart);
    const samples: Sample[] = [await probe.sample()];
    let sampling = true;
    const sampling_ = (async () => {
      while (sampling) {
        await new Promise((r) => setTimeout(r, SAMPLE_EVERY_MS));
        if (sampling) samples.push(await probe.sample());
      }
    })();
    const errors: string[] = [];
    let executions = 0;
    let late = 0;
    const inFlight = new Set<Promise<void>>();
    const end = soakStart + settings.minutes * 60_000;
    for (let i = 0, next = soakStart; nowMs() < end && !interrupted; i++) {
      if (nowMs() - next > LATE_MS) late++;
      const p: Promise<void> = once(i).then(
        () => {
          executions++;
        },
        (err: Error) => {
          errors.push(err.message);
        },
      );
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      next += 1000 / rate;
      await new Promise((r) => setTimeout(r, Math.max(0, next - nowMs())));
    }
    const inLoad = samples.length;
    await Promise.all(inFlight);
    // Let the last executions' bookkeeping finish before the final sample.
    await new Promise((r) => setTimeout(r, 5000));
    sampling = false;
    await sampling_;
    const idle = await probe.sample();
    await probe.close();
    clearInterval(trim);
    tally();

    // The fit reads the samples taken under load; the one after the drain is shown apart.
    const loaded = samples.slice(0, inLoad);
    const steady = loaded.filter((x) => x.atS >= loaded.at(-1)!.atS / 3);
    const spanH = (steady.at(-1)!.atS - steady[0]!.atS) / 3600;
    const rows: string[][] = [];
    const growth: Record<
      string,
      { start: number; end: number; idle: number; per_hour: number; ok: boolean }
    > = {};
    for (const [name, rule] of Object.entries(RULES) as [Exclude<keyof Sample, 'atS'>, Rule][]) {
      const perHour = slope(
        steady.map((x) => x.atS / 3600),
        steady.map((x) => x[name]),
      );
      const [start, level, last] = [loaded[0]![name], steady[0]![name], loaded.at(-1)![name]];
      let limit: string;
      let ok = true;
      if (rule === 'by design') limit = 'shown (relay logs live 1 h)';
      else if (rule === 'never above start') {
        limit = `never above ${start}`;
        ok = Math.max(...loaded.map((x) => x[name]), idle[name]) <= start;
      } else if ('atMost' in rule) {
        limit = `never above ${rule.atMost} (${rule.why})`;
        ok = Math.max(...loaded.map((x) => x[name]), idle[name]) <= rule.atMost;
      } else {
        const max = Math.max(rule.growth.share * level, rule.growth.floor);
        limit = `growth ≤ ${round(max, 1)}`;
        ok = perHour * spanH <= max;
      }
      growth[name] = { start, end: last, idle: idle[name], per_hour: round(perHour, 2), ok };
      rows.push([
        name,
        String(start),
        String(level),
        String(last),
        String(idle[name]),
        String(round(perHour, 2)),
        limit,
        ok ? 'pass' : 'FAIL',
      ]);
    }
    const calls = executions + errors.length === 0 ? 0 : modelCalls / (executions + errors.length);
    const figures: Figure[] = [
      {
        figure: `throughput measured (${settings.clients} clients)`,
        value: round(throughput, 1),
        unit: 'exec/s',
      },
      { figure: 'soak rate (half)', value: round(rate, 2), unit: 'exec/s' },
      { figure: 'executions', value: executions, unit: '' },
      { figure: 'errors', value: errors.length, unit: '', target: { max: 0 } },
      { figure: `starts later than ${LATE_MS} ms after schedule`, value: late, unit: '', target: { max: 0 } },
      { figure: 'model calls per execution', value: round(calls, 3), unit: '', target: { max: 1 } },
    ];
    printTable(`soak: ${settings.minutes} min at half the measured throughput`, figures);
    printRows(
      'resources: first sample, after the first third, last under load, after the drain; slope per hour over the last two thirds',
      ['resource', 'start', 'steady', 'end', 'idle', 'slope /h', 'limit', 'verdict'],
      rows,
    );
    if (errors.length > 0) console.log(`errors: ${[...new Set(errors)].slice(0, 5).join(' | ')}`);
    const file = writeResults('soak', {
      date: new Date().toISOString(),
      machine: machine(),
      run_seconds: round((nowMs() - started) / 1000, 1),
      settings,
      executions,
      errors: errors.length,
      late,
      model_calls: modelCalls,
      growth,
      samples: [...samples, idle],
      figures: figuresJson(figures),
    });
    console.log(`\nwritten to ${file}`);
    failed =
      errors.length > 0 || late > 0 || calls > 1 || Object.values(growth).some((g) => !g.ok) || interrupted;
  } finally {
    await stack.stop();
    await fake.close();
  }
  if (failed) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
