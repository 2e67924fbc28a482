// The execution benchmark's report: per column and concurrency the time to first token and
// throughput, Agentry's added TTFT over the model called directly and its ratio to the bare
// floor, CPU per execution of each component, history counts, the targets of DESIGN §6 as
// pass / fail with the margin, and the figures for bench/results.json.
import type { ColumnName } from './execution-columns';
import type { ConcurrentPhase } from './execution-phases';
import type { historyCounts, historyTimeline } from './histories';
import { round, type Figure, type Summary } from './report';

export interface ColumnResult {
  name: ColumnName;
  label: string;
  sequential: { ttft_ms: Summary; total_ms: Summary; executions_per_s: number; eager_fraction?: number };
  concurrent?: ConcurrentPhase;
  streams?: ConcurrentPhase;
  history?: {
    sequential?: Awaited<ReturnType<typeof historyCounts>>;
    concurrent?: Awaited<ReturnType<typeof historyCounts>>;
  };
  timeline?: Awaited<ReturnType<typeof historyTimeline>>;
}

export type Results = Partial<Record<ColumnName, ColumnResult>>;

const ms = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '—' : n.toFixed(1));
const perExec = (seconds: number | null | undefined, completed: number) =>
  seconds == null || completed === 0 ? NaN : round((seconds * 1000) / completed, 1);

/** Agentry's figures against the direct model and its floor (floor-eager for embedded). */
export function compare(results: Results, mode: 'production' | 'embedded') {
  const col = results[mode]!;
  const direct = results.direct!;
  const floor = results.floor!;
  const floorTtft = (mode === 'embedded' ? results['floor-eager']! : floor).sequential.ttft_ms;
  const added = {
    p50: round(col.sequential.ttft_ms.p50 - direct.sequential.ttft_ms.p50),
    p95: round(col.sequential.ttft_ms.p95 - direct.sequential.ttft_ms.p95),
    p99: round(col.sequential.ttft_ms.p99 - direct.sequential.ttft_ms.p99),
  };
  const conc = col.concurrent;
  const cpu = conc?.cpu as Record<string, number | null> | undefined;
  const nodeS = Object.keys(col.concurrent?.cpu ?? {})
    .filter((k) => ['api_s', 'worker_s', 'api+worker_s'].includes(k))
    .reduce((a, k) => a + (cpu?.[k] ?? NaN), 0);
  const readyz = [conc?.readyz, col.streams?.readyz];
  return {
    added_ttft_ms: added,
    added_ttft_c32_p50_ms:
      conc && direct.concurrent ? round(conc.ttft_ms.p50 - direct.concurrent.ttft_ms.p50) : NaN,
    vs_floor_ttft_p50: round(added.p50 / floorTtft.p50, 2),
    vs_floor_ttft_p95: round(added.p95 / floorTtft.p95, 2),
    throughput_per_s: conc?.executions_per_s ?? NaN,
    vs_floor_throughput: round(
      (conc?.executions_per_s ?? NaN) / (floor.concurrent?.executions_per_s ?? NaN),
      2,
    ),
    errors: (conc?.errors ?? 0) + (col.streams?.errors ?? 0),
    readyz_failures: readyz.reduce((a, r) => a + (r?.failures ?? 0), 0),
    api_worker_cpu_ms_per_exec: perExec(nodeS, conc?.completed ?? 0),
    rss_streams_max_mb: col.streams?.rss.sum_max_mb ?? NaN,
  };
}

export type Comparison = ReturnType<typeof compare>;

/** Rows of the latency / throughput table: every column at c = 1, then at c = clients. */
export function latencyRows(results: Results, comparisons: Partial<Record<ColumnName, Comparison>>) {
  const rows: string[][] = [];
  for (const concurrent of [false, true]) {
    for (const col of Object.values(results)) {
      const phase = concurrent ? col.concurrent : col.sequential;
      if (!phase) continue;
      const cmp = comparisons[col.name];
      const direct = concurrent ? results.direct?.concurrent : results.direct?.sequential;
      const isAgentry = col.name === 'production' || col.name === 'embedded';
      const added =
        isAgentry && direct
          ? [phase.ttft_ms.p50 - direct.ttft_ms.p50, phase.ttft_ms.p95 - direct.ttft_ms.p95]
          : [];
      rows.push([
        col.label,
        concurrent ? String(col.concurrent!.clients) : '1',
        ms(phase.ttft_ms.p50),
        ms(phase.ttft_ms.p95),
        ms(phase.ttft_ms.p99),
        ms(phase.total_ms.p50),
        phase.executions_per_s.toFixed(1),
        concurrent ? String(col.concurrent!.errors) : '0',
        added.length ? `${ms(added[0])} / ${ms(added[1])}` : '',
        cmp && !concurrent ? `${cmp.vs_floor_ttft_p50}× / ${cmp.vs_floor_ttft_p95}×` : '',
        cmp && concurrent ? `${cmp.vs_floor_throughput}×` : '',
      ]);
    }
  }
  return rows;
}

/** Rows of the cost table: CPU per execution at c = clients and history counts at c = 1. */
export function costRows(results: Results) {
  return Object.values(results)
    .filter((col) => col.concurrent || col.history)
    .map((col) => {
      const c = col.concurrent;
      const cpu = (c?.cpu ?? {}) as Record<string, number | null>;
      const own = Object.keys(cpu)
        .filter((k) => ['api_s', 'worker_s', 'api+worker_s', 'floor_s'].includes(k))
        .map((k) => `${k.replace(/_s$/, '')} ${ms(perExec(cpu[k], c!.completed))}`)
        .join(', ');
      const h = col.history?.sequential;
      return [
        col.label,
        c ? own || `bench ${ms(perExec(c.cpu.node_s, c.completed))}` : '',
        c ? ms(perExec(c.cpu.postgres_s, c.completed)) : '',
        c ? ms(perExec(c.cpu.temporal_s, c.completed)) : '',
        c ? `${c.cpu.machine_busy_s} / ${c.cpu.available_s}` : '',
        h ? `${h.events} / ${h.workflow_tasks} / ${h.activities} / ${h.local_activity_markers}` : '',
        col.streams ? `${col.streams.rss.sum_max_mb} MB` : '',
      ];
    });
}

/** The DESIGN §6 targets of one mode. */
export function targetFigures(
  mode: 'production' | 'embedded',
  c: Comparison,
  clients: number,
  streams: number,
): Figure[] {
  const p = mode === 'production' ? 'production' : 'embedded';
  return [
    {
      figure: `${p}: added TTFT p50 (c=1)`,
      value: c.added_ttft_ms.p50,
      unit: 'ms',
      target: { max: mode === 'production' ? 35 : 25 },
    },
    ...(mode === 'production'
      ? [
          {
            figure: `${p}: added TTFT p95 (c=1)`,
            value: c.added_ttft_ms.p95,
            unit: 'ms',
            target: { max: 70 },
          },
        ]
      : []),
    {
      figure: `${p}: added TTFT p50 ÷ floor${mode === 'embedded' ? ' (eager)' : ''}`,
      value: c.vs_floor_ttft_p50,
      unit: '×',
      target: { max: 1.25 },
    },
    {
      figure: `${p}: throughput (c=${clients})`,
      value: c.throughput_per_s,
      unit: 'exec/s',
      target: { min: 50 },
    },
    {
      figure: `${p}: throughput ÷ floor (c=${clients})`,
      value: c.vs_floor_throughput,
      unit: '×',
      target: { min: 0.8 },
    },
    {
      figure: `${p}: errors (c=${clients} and ${streams} streams)`,
      value: c.errors,
      unit: '',
      target: { max: 0 },
    },
    { figure: `${p}: /readyz non-200 answers`, value: c.readyz_failures, unit: '', target: { max: 0 } },
    {
      figure: `${p}: API + worker CPU per execution`,
      value: c.api_worker_cpu_ms_per_exec,
      unit: 'ms',
      target: { max: 25 },
    },
    {
      figure: `${p}: RSS API + worker peak, ${streams} streams`,
      value: c.rss_streams_max_mb,
      unit: 'MB',
      target: { max: 400 },
    },
  ];
}
