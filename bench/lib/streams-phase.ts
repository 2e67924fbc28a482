// One column of one streams scenario, measured: closed-loop clients asking paced answers of the
// model directly, of the bare-Temporal floor or of Agentry, with the CPU of every process apart
// (/proc; Redis by INFO; PostgreSQL: the backends of the column's database), the RSS of the
// column's API and worker, the heartbeats Temporal recorded and each token's delivery
// delay (client receipt − the model's emission, from the paced model's own clock records).
import { measurePhase } from './load-phase';
import { meterDatabaseCpu } from './postgres-cpu';
import type { PacedModel } from './paced-model';
import { deliveryDelays, runClients, type Received } from './stream-clients';
import { heartbeatsSoFar } from './streams-meters';
import { machine, round, summarise } from './report';

export interface StreamScenario {
  id: string;
  /** What it stands for, in the words. */
  label: string;
  clients: number;
  deltas: number;
  delayMs: number;
  /** Rounds per client; 0: closed loop for the duration setting. */
  rounds: number;
  stack: 'production' | 'embedded';
}

export interface PhaseInput {
  scenario: StreamScenario;
  column: 'direct' | 'floor' | 'agentry';
  model: PacedModel;
  /** Processes to account apart (the API and the worker, or the embedded process). */
  processes: Record<string, number | undefined>;
  /** CPU seconds so far of the column's Redis (none: it uses none). */
  redisCpu?: () => Promise<number>;
  /** The column's PostgreSQL database (none: it uses none, or its own in-process PGlite). */
  database?: string;
  durationS: number;
  stop: () => boolean;
  ask: (q: string) => Promise<Received>;
}

const perAnswerMs = (seconds: number | null | undefined, answers: number) =>
  seconds === null || seconds === undefined || answers === 0 ? null : round((seconds * 1000) / answers, 1);

export async function measureColumn(input: PhaseInput) {
  const { scenario, column, model } = input;
  await model.take(); // emission records of earlier phases
  // The direct column does not touch Temporal: its heartbeats are not its own.
  const heartbeatsBefore = column === 'direct' ? null : await heartbeatsSoFar();
  const redisBefore = input.redisCpu ? await input.redisCpu() : null;
  const database = input.database ? meterDatabaseCpu(input.database) : null;
  const tag = `${scenario.id}${column[0]}${Date.now().toString(36)}`;
  let run: Awaited<ReturnType<typeof runClients>> | undefined;
  const phase = await measurePhase({ processes: { ...input.processes, model: model.pid } }, async () => {
    run = await runClients(
      scenario.clients,
      { rounds: scenario.rounds, deadline: Date.now() + input.durationS * 1000 },
      input.stop,
      (c, i) => `${tag}c${c}r${i}`,
      scenario.deltas,
      input.ask,
    );
    return { ttft: run.ttft, total: run.total, errors: run.errors, completed: run.completed };
  });
  const postgresS = database ? database.stop() : null;
  const heartbeatsAfter = column === 'direct' ? null : await heartbeatsSoFar();
  const redisAfter = input.redisCpu ? await input.redisCpu() : null;
  const { emissions, requests } = await model.take();
  const delays: number[] = [];
  let streamMs = 0;
  let unmatched = 0;
  for (const a of run!.answers) {
    const emitted = emissions[a.key];
    if (!emitted) {
      unmatched += 1;
      continue;
    }
    delays.push(...deliveryDelays(a.answer, emitted, a.received));
    streamMs += emitted[emitted.length - 1]! - emitted[0]!;
  }
  const answers = phase.completed;
  const heartbeats =
    heartbeatsBefore === null || heartbeatsAfter === null ? null : heartbeatsAfter - heartbeatsBefore;
  const cpu = phase.cpu as Record<string, number | null>;
  const none = column === 'direct' ? null : 0;
  const redisS = redisBefore === null || redisAfter === null ? null : round(redisAfter - redisBefore, 2);
  const cpuMs: Record<string, number | null> = {};
  for (const name of Object.keys(input.processes)) cpuMs[name] = perAnswerMs(cpu[`${name}_s`], answers);
  const rssPeak = Object.keys(input.processes).reduce((sum, name) => {
    const stats = (phase.rss as unknown as Record<string, { max_mb: number } | null>)[name];
    return sum + (stats?.max_mb ?? 0);
  }, 0);
  return {
    column,
    clients: scenario.clients,
    deltas: scenario.deltas,
    delta_ms: scenario.delayMs,
    wall_s: phase.wall_s,
    answers,
    errors: phase.errors,
    inexact: run!.inexact,
    first_errors: phase.first_errors,
    answers_per_s: round(answers / phase.wall_s, 2),
    ttft_ms: summarise(run!.ttft),
    total_ms: summarise(run!.total),
    delivery_ms: summarise(delays),
    answers_without_emission_record: unmatched,
    model_requests_per_answer: answers === 0 ? null : round(requests / (answers + phase.errors), 3),
    cpu_ms_per_answer: <Record<string, number | null>>{
      ...cpuMs,
      temporal: perAnswerMs(phase.cpu.temporal_s, answers),
      // A column that uses none has a share of 0 (the embedded PGlite's is its process's).
      redis: perAnswerMs(redisS ?? none, answers),
      postgres: perAnswerMs(postgresS ?? none, answers),
      model: perAnswerMs(cpu.model_s, answers),
      clients: perAnswerMs(phase.cpu.node_s, answers),
    },
    // postgres_s: the whole server (other databases too); postgres_database_s: this column's.
    cpu_s: { ...phase.cpu, redis_s: redisS, postgres_database_s: postgresS },
    rss_peak_mb: Object.keys(input.processes).length ? round(rssPeak, 1) : null,
    heartbeats:
      heartbeats === null
        ? null
        : {
            total: heartbeats,
            per_answer: answers === 0 ? null : round(heartbeats / answers, 2),
            per_stream_minute: streamMs === 0 ? null : round(heartbeats / (streamMs / 60_000), 1),
          },
    load_average_1m: machine().load_average_1m,
  };
}

export type ColumnFigures = Awaited<ReturnType<typeof measureColumn>>;
