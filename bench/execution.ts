// `npm run bench -- execution` (DESIGN §6, issue 10 item 6): time to first token (TTFT) and
// throughput of agent executions, side by side in one run on one dev server and machine:
//  (a) the model called directly (the zero-latency fake model server, openai SDK streamed);
//  (b) the bare-Temporal floor: a workflow of the same shape with no-op activities, its own worker
//      and task queue in a process of its own (bench/lib/floor-worker.ts), with and without eager
//      start; TTFT = workflow.start() → the model activity's first line;
//  (c) Agentry through HTTP, in production mode (API and worker processes) and embedded mode
//      (dist/embedded.js: API + worker in one process), each on a fresh database.
// Phases: BENCH_WARMUP + BENCH_EXECUTIONS sequential rounds (each runs every column once, order
// rotated); BENCH_CLIENTS closed-loop clients for BENCH_DURATION_S per column (throughput, CPU
// per component from /proc, /readyz polled); BENCH_STREAMS clients for BENCH_STREAMS_S per
// Agentry mode (RSS peak); BENCH_HISTORIES sampled histories per column (events, workflow tasks,
// activities, local-activity markers) and the median history timeline of BENCH_BREAKDOWN runs.
// Then BENCH_RESPONSES_ROUNDS rounds per Agentry mode of one POST /agents/{id}/execute, one
// POST /v1/responses (issue 28, the OpenAI-compatible route) and one turn on a WebSocket of
// /v1/responses (issue 34), in rotating order: the added time to first token of the Responses
// protocol (target ≤ 2 ms), and the WebSocket turn's against the floor + 10 ms
// (bench/lib/execution-responses.ts). Last, on stacks of their own, the SQL
// statements per execution (BENCH_STATEMENT_EXECUTIONS sequential ones, then BENCH_CLIENTS for
// BENCH_DURATION_S, through a counting proxy) and the CPU profiles.
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startFakeModelServer } from '../test/fakes/fake-model-server';
import { setupAgentBench } from './lib/agent-setup';
import { TEMPORAL_ADDRESS, envInt, log, nowMs } from './lib/env';
import { agentryColumn, directColumn, floorColumns, type Column } from './lib/execution-columns';
import { concurrentPhase, sequentialRounds } from './lib/execution-phases';
import { printExecutionReport } from './lib/execution-output';
import { countStatements, type StatementFigures } from './lib/execution-statements';
import { printProfiles, profileConcurrentPhase, type ProcessProfiles } from './lib/execution-profile';
import type { ColumnResult, Results } from './lib/execution-report';
import { startFloor, type Floor } from './lib/floor';
import { historyCounts, historyTimeline } from './lib/histories';
import { reportResponses, responsesRounds, type ResponsesFigures } from './lib/execution-responses';
import { round, summarise, writeResults } from './lib/report';
import { startAgentryStack, type AgentryStack } from './lib/stacks';

const MODEL = 'bench-model';

const settings = {
  fragments: envInt('BENCH_FRAGMENTS', 300),
  executions: envInt('BENCH_EXECUTIONS', 150),
  warmup: envInt('BENCH_WARMUP', 15, 0),
  clients: envInt('BENCH_CLIENTS', 32),
  durationS: envInt('BENCH_DURATION_S', 20),
  streams: envInt('BENCH_STREAMS', 50),
  streamsS: envInt('BENCH_STREAMS_S', 10),
  histories: envInt('BENCH_HISTORIES', 5),
  breakdown: envInt('BENCH_BREAKDOWN', 30, 0),
  answerWords: envInt('BENCH_ANSWER_WORDS', 50),
  seed: envInt('BENCH_SEED', 42, 0),
  tracing: process.env.BENCH_TRACING === '1',
  responsesRounds: envInt('BENCH_RESPONSES_ROUNDS', 150, 0),
  profile: process.env.BENCH_PROFILE !== '0',
  statementExecutions: envInt('BENCH_STATEMENT_EXECUTIONS', 20, 0),
  /** Another checkout's build as the Agentry columns (the floor and the direct column are this one's). */
  agentryDir: process.env.BENCH_AGENTRY_DIR ? path.resolve(process.env.BENCH_AGENTRY_DIR) : undefined,
};

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (interrupted = true));
const isInterrupted = () => interrupted;
const startedAt = nowMs();
/** A progress line with the seconds since the start (where a run's time goes). */
const step = (message: string) => log(`${message} (at ${Math.round((nowMs() - startedAt) / 1000)} s)`);

/** Starts all of `starts`; when one fails, stops those that started and rethrows. */
async function startAll<T extends { stop(): Promise<void> }>(starts: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  if (failed) {
    await Promise.all(started.map((s) => s.stop()));
    throw failed.reason;
  }
  return started;
}

async function measure(columns: Column[], temporal: Client): Promise<Results> {
  step(`sequential: ${settings.warmup} warm-up + ${settings.executions} rounds of ${columns.length} columns`);
  const runs = await sequentialRounds(columns, settings.warmup, settings.executions, isInterrupted);
  const results: Results = {};
  for (const column of columns) {
    const list = runs.get(column.name)!;
    const meanTotal = list.reduce((a, r) => a + r.totalMs, 0) / Math.max(1, list.length);
    const eager = list.filter((r) => r.eager).length;
    const result: ColumnResult = {
      name: column.name,
      label: column.label,
      sequential: {
        ttft_ms: summarise(list.map((r) => r.ttftMs)),
        total_ms: summarise(list.map((r) => r.totalMs)),
        executions_per_s: round(1000 / meanTotal, 1),
        ...(column.name.startsWith('floor') ? { eager_fraction: round(eager / list.length, 2) } : {}),
      },
    };
    const ids = list.flatMap((r) => (r.workflowId ? [r.workflowId] : []));
    if (ids.length)
      result.history = { sequential: await historyCounts(temporal, ids.slice(-settings.histories)) };
    if ((column.name === 'production' || column.name === 'embedded') && settings.breakdown > 0) {
      const timed = list.slice(-settings.breakdown).map((r) => ({
        workflowId: r.workflowId!,
        sentAt: r.sentAt!,
        headersMs: r.headersMs!,
        ttftMs: r.ttftMs,
      }));
      result.timeline = await historyTimeline(temporal, timed);
    }
    results[column.name] = result;
  }
  for (const column of columns.filter((c) => c.loop)) {
    if (interrupted) throw new Error('interrupted');
    step(`concurrent: ${column.label}, ${settings.clients} clients for ${settings.durationS} s`);
    const phase = await concurrentPhase(column, settings.clients, settings.durationS, isInterrupted);
    const result = results[column.name]!;
    result.concurrent = phase;
    if (phase.workflowIds.length) {
      const concurrent = await historyCounts(temporal, phase.workflowIds.slice(-settings.histories));
      result.history = { ...result.history, concurrent };
    }
    if (column.readyUrl && settings.streams > 0) {
      step(`streams: ${column.label}, ${settings.streams} clients for ${settings.streamsS} s (RSS peak)`);
      result.streams = await concurrentPhase(column, settings.streams, settings.streamsS, isInterrupted);
    }
  }
  return results;
}

async function main(): Promise<void> {
  const started = nowMs();
  const answer = Array.from({ length: settings.answerWords }, (_, i) => `word${i}`).join(' ');
  const fake = await startFakeModelServer({ defaults: { deltaDelayMs: 0, text: answer } });
  const connection = await Connection.connect({ address: TEMPORAL_ADDRESS });
  const temporal = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
  let stops: { stop(): Promise<void> }[] = [];
  try {
    step('starting the floor worker, Agentry production (API + worker) and Agentry embedded');
    stops = await startAll<Floor | AgentryStack>([
      startFloor(),
      startAgentryStack('production', 'execution-production', {}, { root: settings.agentryDir }),
      startAgentryStack('embedded', 'execution-embedded', {}, { root: settings.agentryDir }),
    ]);
    const [floor, production, embedded] = stops as [Floor, AgentryStack, AgentryStack];
    const agentOptions = { name: 'bench-execution', model: MODEL, ...settings, dims: 384 };
    const [prodAgent, embAgent] = await Promise.all([
      setupAgentBench(production.http, fake, agentOptions),
      setupAgentBench(embedded.http, fake, agentOptions),
    ]);
    step(`agents ready: ${prodAgent.documents} documents, ${settings.fragments} fragments each`);
    const agentry = [agentryColumn(production, prodAgent), agentryColumn(embedded, embAgent)];
    const first = await agentry[0]!.one(0);
    const rendered = fake.requestsFor(MODEL).at(-1)?.body;
    if (!rendered) throw new Error('the fake model saw no request');
    const deltas = first.deltas;
    const columns = [directColumn(fake.url, rendered), ...floorColumns(floor), ...agentry];
    // The fake records every request body: keep its memory flat.
    const trim = setInterval(() => fake.reset(), 1000);
    let results: Results;
    try {
      results = await measure(columns, temporal);
    } finally {
      clearInterval(trim);
    }
    const responses: Record<string, ResponsesFigures> = {};
    for (const [stack, agent] of [
      [production, prodAgent],
      [embedded, embAgent],
    ] as const) {
      if (settings.responsesRounds === 0 || interrupted) break;
      step(`responses: ${settings.warmup} warm-up + ${settings.responsesRounds} rounds, ${stack.mode}`);
      responses[stack.mode] = await responsesRounds(stack, agent, settings, isInterrupted);
    }
    let statements: StatementFigures | undefined;
    if (settings.statementExecutions > 0 && !interrupted) {
      step(
        `statements: ${settings.statementExecutions} sequential executions, then ${settings.clients} clients ` +
          `for ${settings.durationS} s, production, through a counting proxy`,
      );
      statements = await countStatements(fake, agentOptions, {
        executions: settings.statementExecutions,
        warmup: settings.warmup,
        clients: settings.clients,
        durationS: settings.durationS,
        stop: isInterrupted,
        root: settings.agentryDir,
      });
    }
    let profiles: ProcessProfiles | undefined;
    if (settings.profile && !interrupted) {
      step(
        `profiles: API and worker with --cpu-prof, ${settings.clients} clients for ${settings.durationS} s`,
      );
      profiles = await profileConcurrentPhase(
        fake,
        agentOptions,
        settings.clients,
        settings.durationS,
        isInterrupted,
      );
    }
    printExecutionReport(
      results,
      { ...settings, deltas_per_answer: deltas },
      round((nowMs() - started) / 1000, 1),
      statements,
    );
    if (Object.keys(responses).length > 0) reportResponses(responses, results);
    if (profiles) {
      printProfiles(profiles, settings.clients);
      writeResults('execution-profiles', {
        date: new Date().toISOString(),
        clients: settings.clients,
        ...profiles,
      });
    }
  } finally {
    await Promise.all(stops.map((s) => s.stop()));
    await connection.close();
    await fake.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
