// The streams benchmark's report: per scenario the three columns side by side (the model called
// directly, the bare-Temporal floor and Agentry, same run), the CPU per answer of each process and
// per delta; the floor comparison and the targets are in bench/lib/streams-targets.ts.
import type { ColumnFigures, StreamScenario } from './streams-phase';
import { printRows, round } from './report';

export interface ScenarioResult {
  scenario: StreamScenario;
  direct?: ColumnFigures;
  floor?: ColumnFigures;
  agentry?: ColumnFigures;
}

export const n = (v: number | null | undefined, digits = 1) =>
  v === null || v === undefined || !Number.isFinite(v) ? '—' : String(round(v, digits));
const signed = (v: number | null) => (v === null ? '—' : `${v >= 0 ? '+' : ''}${round(v, 1)}`);
export const signedMs = (v: number | null) => (v === null ? '—' : `${signed(v)} ms`);
export const diff = (a?: number | null, b?: number | null) =>
  a === null || a === undefined || b === null || b === undefined ? null : round(a - b, 1);
export const ratio = (a?: number | null, b?: number | null) =>
  typeof a === 'number' && typeof b === 'number' && b > 0 ? round(a / b, 2) : null;

const cpuOf = (c: ColumnFigures | undefined, names: string[]): number | null => {
  if (!c) return null;
  const m = c.cpu_ms_per_answer as Record<string, number | null | undefined>;
  const parts = names.map((k) => m[k]).filter((v): v is number => typeof v === 'number');
  return parts.length
    ? round(
        parts.reduce((x, y) => x + y, 0),
        1,
      )
    : null;
};
/** The API's and the worker's CPU ms per answer (the embedded process's). */
export const productCpu = (c?: ColumnFigures) => cpuOf(c, ['api', 'worker', 'embedded']);
/** DESIGN §6's CPU per answer: API + worker + Temporal + PostgreSQL + Redis (what a column uses). */
export const totalCpu = (c?: ColumnFigures) =>
  c?.column === 'direct' ? null : cpuOf(c, ['api', 'worker', 'embedded', 'temporal', 'postgres', 'redis']);

/** A column against the direct one: added first token and delivery delay, throughput ratio. */
export function versusDirect(col?: ColumnFigures, d?: ColumnFigures) {
  return {
    added_ttft_p50_ms: diff(col?.ttft_ms.p50, d?.ttft_ms.p50),
    added_ttft_p95_ms: diff(col?.ttft_ms.p95, d?.ttft_ms.p95),
    added_delivery_p50_ms: diff(col?.delivery_ms.p50, d?.delivery_ms.p50),
    added_delivery_p95_ms: diff(col?.delivery_ms.p95, d?.delivery_ms.p95),
    answers_per_s_ratio: ratio(col?.answers_per_s, d?.answers_per_s),
  };
}

/** Agentry against the floor (DESIGN §6): answers/s ratio, first token differences, CPU. */
export function versusFloor(a?: ColumnFigures, f?: ColumnFigures) {
  const perProcess = ['api', 'worker', 'embedded', 'temporal', 'postgres', 'redis'] as const;
  const ms = (c: ColumnFigures | undefined, k: string) =>
    (c?.cpu_ms_per_answer as Record<string, number | null> | undefined)?.[k] ?? null;
  return {
    answers_per_s_ratio: ratio(a?.answers_per_s, f?.answers_per_s),
    ttft_p50_ms: diff(a?.ttft_ms.p50, f?.ttft_ms.p50),
    ttft_p95_ms: diff(a?.ttft_ms.p95, f?.ttft_ms.p95),
    cpu_total_ratio: ratio(totalCpu(a), totalCpu(f)),
    /** Agentry's CPU ms per answer minus the floor's, per process (absent ones count 0). */
    cpu_added_ms: Object.fromEntries(
      perProcess
        .filter((k) => ms(a, k) !== null || ms(f, k) !== null)
        .map((k) => [k, round((ms(a, k) ?? 0) - (ms(f, k) ?? 0), 1)]),
    ),
  };
}

/** Agentry against direct (the keys of issue 25), the floor against direct, Agentry against the floor. */
export const comparison = (r: ScenarioResult) => ({
  ...versusDirect(r.agentry, r.direct),
  floor_vs_direct: versusDirect(r.floor, r.direct),
  floor: versusFloor(r.agentry, r.floor),
});

/** CPU ms per delta: the slope of CPU per answer between two answer lengths (S2 and S2-short). */
export function cpuPerDelta(long?: ScenarioResult, short?: ScenarioResult) {
  if (!long || !short || long.scenario.deltas === short.scenario.deltas) return null;
  const span = long.scenario.deltas - short.scenario.deltas;
  const slope = (a: number | null | undefined, b: number | null | undefined) =>
    typeof a === 'number' && typeof b === 'number' ? round((a - b) / span, 3) : null;
  return {
    between: `${short.scenario.id} (${short.scenario.deltas}) and ${long.scenario.id} (${long.scenario.deltas}) deltas`,
    agentry_api_worker_ms: slope(productCpu(long.agentry), productCpu(short.agentry)),
    agentry_api_ms: slope(long.agentry?.cpu_ms_per_answer.api, short.agentry?.cpu_ms_per_answer.api),
    agentry_worker_ms: slope(long.agentry?.cpu_ms_per_answer.worker, short.agentry?.cpu_ms_per_answer.worker),
    floor_api_worker_ms: slope(productCpu(long.floor), productCpu(short.floor)),
    direct_client_ms: slope(long.direct?.cpu_ms_per_answer.clients, short.direct?.cpu_ms_per_answer.clients),
  };
}

const columnsOf = (r: ScenarioResult) =>
  [r.direct, r.floor, r.agentry].filter((c): c is ColumnFigures => c !== undefined);

export function printStreams(results: ScenarioResult[], perDelta: ReturnType<typeof cpuPerDelta>): void {
  const rows: string[][] = [];
  for (const r of results) {
    for (const col of columnsOf(r)) {
      const viaTemporal = col.column !== 'direct';
      const c = versusDirect(col, r.direct);
      rows.push([
        `${r.scenario.id} ${col.clients}×${col.deltas}@${col.delta_ms}`,
        col.column,
        `${col.answers}${col.errors ? ` (${col.errors} err)` : ''}`,
        `${n(col.answers_per_s, 2)}${viaTemporal ? ` (${n(c.answers_per_s_ratio, 2)}×)` : ''}`,
        `${n(col.ttft_ms.p50, 0)} / ${n(col.ttft_ms.p95, 0)}`,
        viaTemporal ? `${n(c.added_ttft_p50_ms, 0)} / ${n(c.added_ttft_p95_ms, 0)}` : '',
        `${n(col.delivery_ms.p95, 1)}${viaTemporal ? ` (${signed(c.added_delivery_p95_ms)})` : ''}`,
        n(col.heartbeats?.per_answer, 1),
        n(col.heartbeats?.per_stream_minute, 1),
        n(col.rss_peak_mb, 0),
      ]);
    }
  }
  printRows(
    'streams: the model called directly (openai SDK), the bare-Temporal floor and Agentry, same paced model, same run',
    [
      'scenario clients×deltas@ms',
      'column',
      'answers',
      'answers/s (÷ direct)',
      'first token p50 / p95 ms',
      'added p50 / p95 ms',
      'delivery p95 ms (added)',
      'heartbeats / answer',
      '/ stream-min',
      'RSS peak MB',
    ],
    rows,
  );
  const cpuRows: string[][] = [];
  for (const r of results) {
    for (const col of columnsOf(r)) {
      const m = col.cpu_ms_per_answer as Record<string, number | null | undefined>;
      cpuRows.push([
        r.scenario.id,
        col.column,
        n(m.api ?? m.embedded),
        n(m.worker),
        n(m.temporal),
        n(m.postgres),
        n(m.redis),
        n(totalCpu(col)),
        n(m.model),
        n(m.clients),
        `${n(col.cpu_s.machine_busy_s)} of ${n(col.cpu_s.available_s)} (other ${n(col.cpu_s.other_s)})`,
      ]);
    }
  }
  printRows(
    'CPU ms per answer (/proc; PostgreSQL: the backends of the column’s database; Redis: INFO cpu of the benchmark’s own redis-server; embedded: API = the one process; total = API + worker + Temporal + PostgreSQL + Redis)',
    [
      'scenario',
      'column',
      'API',
      'worker',
      'Temporal',
      'PostgreSQL',
      'Redis',
      'total',
      'model',
      'clients',
      'machine busy s',
    ],
    cpuRows,
  );
  if (perDelta)
    console.log(
      `CPU per delta (slope between ${perDelta.between}): Agentry API + worker ${n(perDelta.agentry_api_worker_ms, 3)} ms ` +
        `(API ${n(perDelta.agentry_api_ms, 3)}, worker ${n(perDelta.agentry_worker_ms, 3)}); ` +
        `the floor's API + worker ${n(perDelta.floor_api_worker_ms, 3)} ms; ` +
        `the openai SDK client alone ${n(perDelta.direct_client_ms, 3)} ms`,
    );
}
