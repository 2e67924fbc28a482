// `npm run bench -- execution` (DESIGN §6): orchestration overhead and throughput of agent
// executions. One agent (1 query + 1 similarity placeholder, k 5) on a pipeline of a few hundred
// fragments (`hash` embedder, 384 dims) and an LLM on the zero-latency fake model server
// (deltaDelayMs 0, ~50-token answers). Through HTTP with authentication, as a client would:
//  - time to first token (TTFT): from sending POST /agents/{id}/execute (NDJSON) to reading the
//    first `delta` line, BENCH_WARMUP warm-up then BENCH_EXECUTIONS sequential executions;
//  - baselines in the same run: the model called directly (openai SDK, streamed
//    `responses.create` with the same rendered prompt, time to the first delta event) and the
//    retrieval dry run POST /agents/{id}/search (HTTP + auth + retrieval, no Temporal);
//  - overhead = TTFT p50/p95 through the API minus the direct p50/p95;
//  - where the time goes: Temporal history event times of BENCH_BREAKDOWN executions against the
//    client's send / first-delta times (same machine clock), median per step;
//  - throughput: BENCH_CLIENTS concurrent clients executing for BENCH_DURATION_S seconds.
// The API and the worker run in this process (bench/lib/harness.ts) on a fresh database.
import OpenAI from 'openai';
import type { ResponseCreateParamsStreaming } from 'openai/resources/responses/responses';
import { temporal as proto, type google } from '@temporalio/proto';
import { startFakeModelServer, type FakeModelServer } from '../test/fakes/fake-model-server';
import { workflowIdFor } from '../workflows/contracts';
import { setupAgentBench, type AgentBench } from './lib/agent-setup';
import { closedLoop } from './lib/closed-loop';
import { cpuBetween, cpuSnapshot } from './lib/cpu';
import { envInt, log, nowMs } from './lib/env';
import { startBenchStack, streamExecution, type BenchStack, type StreamedExecution } from './lib/harness';
import { figuresJson, machine, percentile, printTable, round, writeResults, type Figure } from './lib/report';

const DIMS = 384;
const K = 5;
const MODEL = 'bench-model';

const settings = {
  fragments: envInt('BENCH_FRAGMENTS', 300),
  executions: envInt('BENCH_EXECUTIONS', 200),
  warmup: envInt('BENCH_WARMUP', 20, 0),
  clients: envInt('BENCH_CLIENTS', 32),
  durationS: envInt('BENCH_DURATION_S', 20),
  breakdown: envInt('BENCH_BREAKDOWN', 30, 0),
  answerWords: envInt('BENCH_ANSWER_WORDS', 50),
  seed: envInt('BENCH_SEED', 42, 0),
};

interface Summary {
  n: number;
  p50: number;
  p95: number;
  mean: number;
  max: number;
}

const summarise = (samples: number[]): Summary => ({
  n: samples.length,
  p50: round(percentile(samples, 50)),
  p95: round(percentile(samples, 95)),
  mean: round(samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length)),
  max: round(samples.length ? Math.max(...samples) : NaN),
});

// ---- setup through the API ----------------------------------------------------------------

type Setup = AgentBench;

async function setup(stack: BenchStack, fake: FakeModelServer): Promise<Setup> {
  const s = await setupAgentBench(stack.http, fake, {
    name: 'bench-execution',
    model: MODEL,
    fragments: settings.fragments,
    seed: settings.seed,
    dims: DIMS,
  });
  const [{ n }] = (await stack.rt
    .db('fragments')
    .where({ pipeline_id: s.pipelineId, current: true })
    .count('* as n')) as unknown as [{ n: string }];
  log(`pipeline ready: ${s.documents} documents, ${n} fragments`);
  return s;
}

// ---- one execution as a client ------------------------------------------------------------

type Execution = StreamedExecution;

function execute(stack: BenchStack, s: Setup, question: string): Promise<Execution> {
  return streamExecution(
    `${stack.http.baseUrl}/agents/${s.agentId}/execute`,
    {
      'x-api-key': stack.config.adminKeyId!,
      'x-api-key-secret': stack.config.adminKeySecret!,
      'x-pipeline-id': s.pipelineId,
      'x-llm-id': s.llmId,
    },
    { prompt: { question }, classification: 'internal' },
  );
}

// ---- baselines ----------------------------------------------------------------------------

/** The model called directly with the rendered prompt the worker sent: time to the first delta. */
async function directModel(fake: FakeModelServer, body: Record<string, unknown>, n: number) {
  const client = new OpenAI({ apiKey: 'sk-bench', baseURL: fake.url, maxRetries: 0 });
  const params = { ...body, stream: true } as unknown as ResponseCreateParamsStreaming;
  const ttft: number[] = [];
  const total: number[] = [];
  for (let i = 0; i < settings.warmup + n; i++) {
    const t = nowMs();
    let first = NaN;
    const stream = await client.responses.create(params);
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta' && Number.isNaN(first)) first = nowMs() - t;
    }
    if (i >= settings.warmup) {
      ttft.push(first);
      total.push(nowMs() - t);
    }
  }
  return { ttft_ms: summarise(ttft), total_ms: summarise(total) };
}

/** The retrieval dry run through HTTP: auth, agent/pipeline loads, embedding and the search. */
async function dryRun(stack: BenchStack, s: Setup, n: number) {
  const samples: number[] = [];
  for (let i = 0; i < settings.warmup + n; i++) {
    const t = nowMs();
    const res = await fetch(`${stack.http.baseUrl}/agents/${s.agentId}/search`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': stack.config.adminKeyId!,
        'x-api-key-secret': stack.config.adminKeySecret!,
        'x-pipeline-id': s.pipelineId,
      },
      body: JSON.stringify({
        prompt: { question: s.questions[i % s.questions.length] },
        classification: 'internal',
      }),
    });
    if (res.status !== 200) throw new Error(`search → ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
    if (i >= settings.warmup) samples.push(nowMs() - t);
  }
  return summarise(samples);
}

// ---- breakdown from the Temporal history --------------------------------------------------

const EventType = proto.api.enums.v1.EventType;

function eventMs(ts: google.protobuf.ITimestamp | null | undefined): number {
  if (!ts) return NaN;
  return Number(String(ts.seconds ?? 0)) * 1000 + (ts.nanos ?? 0) / 1e6;
}

const shortType = (t: number | null | undefined): string =>
  (EventType[t ?? 0] ?? String(t)).replace(/^EVENT_TYPE_/, '').toLowerCase();

/**
 * For each execution, the offset (ms from the client's send) of every history event up to the
 * callModel activity's start, labelled by type (and activity), then the client's first delta.
 * The median offset per label gives a timeline; consecutive differences are the steps.
 */
async function breakdown(stack: BenchStack, executions: Execution[]) {
  const offsets = new Map<string, number[]>();
  const order: string[] = [];
  const add = (label: string, ms: number) => {
    if (!offsets.has(label)) {
      offsets.set(label, []);
      order.push(label);
    }
    offsets.get(label)!.push(ms);
  };
  for (const ex of executions) {
    const history = await stack.temporal.workflow.getHandle(workflowIdFor(ex.executionId)).fetchHistory();
    const activityOf = new Map<string, string>();
    const seen = new Map<string, number>();
    for (const e of history.events ?? []) {
      const type = shortType(e.eventType);
      let name = '';
      if (e.activityTaskScheduledEventAttributes) {
        name = e.activityTaskScheduledEventAttributes.activityType?.name ?? '?';
        activityOf.set(String(e.eventId), name);
      } else if (e.activityTaskStartedEventAttributes) {
        name = activityOf.get(String(e.activityTaskStartedEventAttributes.scheduledEventId)) ?? '?';
      } else if (e.activityTaskCompletedEventAttributes) {
        name = activityOf.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId)) ?? '?';
      }
      const base = name ? `${type} ${name}` : type;
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      const label = n > 1 ? `${base} #${n}` : base;
      const at = eventMs(e.eventTime) - ex.sentAt;
      // Events up to the model call's start (the completion of callModel comes after the answer).
      if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED && name === 'callModel') {
        add(label, at);
        break;
      }
      add(label, at);
    }
    add('client: response headers', ex.headersMs);
    add('client: first delta', ex.ttftMs);
  }
  const timeline = order
    .map((label) => ({ label, n: offsets.get(label)!.length, at: percentile(offsets.get(label)!, 50) }))
    .filter((row) => row.n >= executions.length / 2)
    .sort((a, b) => a.at - b.at);
  return timeline.map((row, i) => ({
    event: row.label,
    median_at_ms: round(row.at),
    step_ms: round(i === 0 ? row.at : row.at - timeline[i - 1]!.at),
  }));
}

// ---- throughput ---------------------------------------------------------------------------

async function throughput(stack: BenchStack, s: Setup, fake: FakeModelServer) {
  const deadline = nowMs() + settings.durationS * 1000;
  // The fake records every request body: keep its memory flat.
  const trim = setInterval(() => fake.reset(), 1000);
  const cpuBefore = cpuSnapshot();
  const start = nowMs();
  const { ttft, total, errors, completed } = await closedLoop(
    settings.clients,
    deadline,
    () => interrupted,
    (c, i) => execute(stack, s, s.questions[(c * 7 + i) % s.questions.length]!),
  );
  const wallS = (nowMs() - start) / 1000;
  clearInterval(trim);
  const cpu = cpuBetween(cpuBefore, cpuSnapshot());
  return {
    clients: settings.clients,
    wall_s: round(wallS, 2),
    completed,
    errors: errors.length,
    first_errors: [...new Set(errors)].slice(0, 5),
    executions_per_s: round(completed / wallS, 1),
    ttft_ms: summarise(ttft),
    total_ms: summarise(total),
    cpu,
  };
}

// ---- main ---------------------------------------------------------------------------------

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (interrupted = true));

async function main(): Promise<void> {
  const started = nowMs();
  const answer = Array.from({ length: settings.answerWords }, (_, i) => `word${i}`).join(' ');
  const fake = await startFakeModelServer({ defaults: { deltaDelayMs: 0, text: answer } });
  const stack = await startBenchStack('execution');
  try {
    const s = await setup(stack, fake);

    log(`sequential: ${settings.warmup} warm-up + ${settings.executions} executions`);
    const sequential: Execution[] = [];
    for (let i = 0; i < settings.warmup + settings.executions; i++) {
      if (interrupted) throw new Error('interrupted');
      const ex = await execute(stack, s, s.questions[i % s.questions.length]!);
      if (i >= settings.warmup) sequential.push(ex);
    }
    const rendered = fake.requestsFor(MODEL).at(-1)?.body;
    if (!rendered) throw new Error('the fake model saw no request');
    const deltasPerAnswer = sequential[0]!.deltas;

    log('baseline: the model called directly');
    const direct = await directModel(fake, rendered, settings.executions);
    log('baseline: retrieval dry run through HTTP');
    const search = await dryRun(stack, s, settings.executions);
    log(`breakdown from ${settings.breakdown} histories`);
    const steps = await breakdown(stack, sequential.slice(-settings.breakdown));
    fake.reset();

    log(`throughput: ${settings.clients} clients for ${settings.durationS} s`);
    const load = await throughput(stack, s, fake);

    const ttft = summarise(sequential.map((e) => e.ttftMs));
    const overhead = {
      p50: round(ttft.p50 - direct.ttft_ms.p50),
      p95: round(ttft.p95 - direct.ttft_ms.p95),
    };
    const figures: Figure[] = [
      { figure: 'orchestration overhead p50', value: overhead.p50, unit: 'ms', target: { max: 25 } },
      { figure: 'orchestration overhead p95', value: overhead.p95, unit: 'ms', target: { max: 60 } },
      {
        figure: `throughput (${settings.clients} clients)`,
        value: load.executions_per_s,
        unit: 'exec/s',
        target: { min: 100 },
      },
      { figure: 'throughput errors', value: load.errors, unit: '', target: { max: 0 } },
      { figure: '  TTFT through the API p50', value: ttft.p50, unit: 'ms' },
      { figure: '  TTFT through the API p95', value: ttft.p95, unit: 'ms' },
      { figure: '  baseline: model direct TTFT p50', value: direct.ttft_ms.p50, unit: 'ms' },
      { figure: '  baseline: model direct TTFT p95', value: direct.ttft_ms.p95, unit: 'ms' },
      { figure: '  baseline: retrieval dry run (HTTP) p50', value: search.p50, unit: 'ms' },
      { figure: '  baseline: retrieval dry run (HTTP) p95', value: search.p95, unit: 'ms' },
      {
        figure: '  execution total (sequential) p50',
        value: summarise(sequential.map((e) => e.totalMs)).p50,
        unit: 'ms',
      },
      { figure: `  TTFT under load p50`, value: load.ttft_ms.p50, unit: 'ms' },
      { figure: `  TTFT under load p95`, value: load.ttft_ms.p95, unit: 'ms' },
    ];
    const runSeconds = round((nowMs() - started) / 1000, 1);
    printTable(
      `execution: agent with 1 query + 1 similarity (k ${K}), ${settings.fragments} fragments, ` +
        `${deltasPerAnswer}-delta answers, zero-latency fake model, ${settings.executions} sequential executions`,
      figures,
    );
    console.log(
      `where the time to first token goes (median over ${settings.breakdown} executions, ms from send):\n`,
    );
    const width = Math.max(...steps.map((r) => r.event.length));
    console.log(`${'event'.padEnd(width)}  ${'at'.padStart(8)}  ${'step'.padStart(8)}`);
    for (const r of steps)
      console.log(
        `${r.event.padEnd(width)}  ${r.median_at_ms.toFixed(2).padStart(8)}  ${r.step_ms.toFixed(2).padStart(8)}`,
      );
    console.log(
      `\nthroughput: ${load.completed} executions in ${load.wall_s} s, ${load.errors} errors; ` +
        `CPU s: node ${load.cpu.node_s}, postgres ${load.cpu.postgres_s}, temporal ${load.cpu.temporal_s}, ` +
        `machine busy ${load.cpu.machine_busy_s} of ${round(load.cpu.wall_s * machine().cores, 1)}`,
    );
    if (load.errors > 0) console.log(`errors: ${load.first_errors.join(' | ')}`);
    const file = writeResults('execution', {
      date: new Date().toISOString(),
      machine: machine(),
      run_seconds: runSeconds,
      settings: { ...settings, dims: DIMS, k: K, deltas_per_answer: deltasPerAnswer },
      sequential: {
        ttft_ms: ttft,
        headers_ms: summarise(sequential.map((e) => e.headersMs)),
        total_ms: summarise(sequential.map((e) => e.totalMs)),
      },
      direct_model: direct,
      retrieval_dry_run_ms: search,
      overhead_ms: overhead,
      breakdown: steps,
      throughput: load,
      figures: figuresJson(figures),
    });
    console.log(`\nwritten to ${file} (run time ${runSeconds} s)`);
  } finally {
    // A Temporal client call retrying when the connection closes (a reader's long poll cut by
    // the shutdown) throws from a gRPC timer: the results are written by then, so ignore it.
    process.on('uncaughtException', (err) => {
      if (err.message === 'Channel has been shut down') log(`ignored during shutdown: ${err.message}`);
      else throw err;
    });
    await stack.stop();
    await fake.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
