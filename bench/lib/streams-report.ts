// The streams benchmark's report: per scenario the two columns side by side (Agentry against the
// model called directly in the same run), the CPU per answer and per delta, and the issue's
// targets with their margins.
import type { ColumnFigures, StreamScenario } from './streams-phase';
import { printRows, printTable, round, type Figure } from './report';

export interface ScenarioResult {
  scenario: StreamScenario;
  direct?: ColumnFigures;
  agentry?: ColumnFigures;
}

const n = (v: number | null | undefined, digits = 1) =>
  v === null || v === undefined || !Number.isFinite(v) ? '—' : String(round(v, digits));
const signed = (v: number | null) => (v === null ? '—' : `${v >= 0 ? '+' : ''}${round(v, 1)}`);
const diff = (a?: number | null, b?: number | null) =>
  a === null || a === undefined || b === null || b === undefined ? null : round(a - b, 1);

/** Agentry against direct: added first token and delivery delay, throughput ratio. */
export function comparison(r: ScenarioResult) {
  const { direct: d, agentry: a } = r;
  return {
    added_ttft_p50_ms: diff(a?.ttft_ms.p50, d?.ttft_ms.p50),
    added_ttft_p95_ms: diff(a?.ttft_ms.p95, d?.ttft_ms.p95),
    added_delivery_p50_ms: diff(a?.delivery_ms.p50, d?.delivery_ms.p50),
    added_delivery_p95_ms: diff(a?.delivery_ms.p95, d?.delivery_ms.p95),
    answers_per_s_ratio: a && d && d.answers_per_s > 0 ? round(a.answers_per_s / d.answers_per_s, 2) : null,
  };
}

const productCpu = (c?: ColumnFigures): number | null => {
  if (!c) return null;
  const m = c.cpu_ms_per_answer as Record<string, number | null | undefined>;
  const parts = [m.api, m.worker, m.embedded].filter((v): v is number => typeof v === 'number');
  return parts.length
    ? round(
        parts.reduce((x, y) => x + y, 0),
        1,
      )
    : null;
};

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
    direct_client_ms: slope(long.direct?.cpu_ms_per_answer.clients, short.direct?.cpu_ms_per_answer.clients),
  };
}

export function printStreams(results: ScenarioResult[], perDelta: ReturnType<typeof cpuPerDelta>): void {
  const rows: string[][] = [];
  for (const r of results) {
    const c = comparison(r);
    for (const col of [r.direct, r.agentry]) {
      if (!col) continue;
      const agentry = col.column === 'agentry';
      rows.push([
        `${r.scenario.id} ${col.clients}×${col.deltas}@${col.delta_ms}`,
        col.column,
        `${col.answers}${col.errors ? ` (${col.errors} err)` : ''}`,
        `${n(col.answers_per_s, 2)}${agentry ? ` (${n(c.answers_per_s_ratio, 2)}×)` : ''}`,
        `${n(col.ttft_ms.p50, 0)} / ${n(col.ttft_ms.p95, 0)}`,
        agentry ? `${n(c.added_ttft_p50_ms, 0)} / ${n(c.added_ttft_p95_ms, 0)}` : '',
        `${n(col.delivery_ms.p95, 1)}${agentry ? ` (${signed(c.added_delivery_p95_ms)})` : ''}`,
        n(col.heartbeats?.per_answer, 1),
        n(col.heartbeats?.per_stream_minute, 1),
        n(col.rss_peak_mb, 0),
      ]);
    }
  }
  printRows(
    'streams: Agentry against the model called directly (openai SDK), same paced model, same run',
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
    for (const col of [r.direct, r.agentry]) {
      if (!col) continue;
      const m = col.cpu_ms_per_answer as Record<string, number | null | undefined>;
      cpuRows.push([
        r.scenario.id,
        col.column,
        n(m.api ?? m.embedded),
        n(m.worker),
        n(m.temporal),
        n(m.redis),
        n(m.postgres),
        n(m.model),
        n(m.clients),
        `${n(col.cpu_s.machine_busy_s)} of ${n(col.cpu_s.available_s)} (other ${n(col.cpu_s.other_s)})`,
      ]);
    }
  }
  printRows(
    'CPU ms per answer (/proc; Redis: INFO cpu of the benchmark’s own redis-server; PostgreSQL: the backends of Agentry’s database; embedded: API column = the one process)',
    [
      'scenario',
      'column',
      'API',
      'worker',
      'Temporal',
      'Redis',
      'PostgreSQL',
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
        `the openai SDK client alone ${n(perDelta.direct_client_ms, 3)} ms`,
    );
}

/** The issue's targets (issue 25), for the scenarios that ran. */
export function targetFigures(results: ScenarioResult[], perDelta: ReturnType<typeof cpuPerDelta>): Figure[] {
  const by = (id: string) => results.find((r) => r.scenario.id === id);
  const figures: Figure[] = [];
  const add = (figure: string, value: number | null | undefined, unit: string, target: Figure['target']) => {
    if (value !== null && value !== undefined) figures.push({ figure, value, unit, target });
  };
  for (const r of results) {
    const a = r.agentry;
    if (!a) continue;
    add(`${r.scenario.id} errors + inexact answers`, a.errors + a.inexact, '', { max: 0 });
  }
  const s1 = by('S1');
  if (s1) {
    add('S1 answers/s ÷ direct', comparison(s1).answers_per_s_ratio, '×', { min: 0.9 });
    add('S1 added first token p50', comparison(s1).added_ttft_p50_ms, 'ms', { max: 100 });
    add('S1 added first token p95', comparison(s1).added_ttft_p95_ms, 'ms', { max: 300 });
  }
  const s2 = by('S2');
  if (s2) {
    add('S2 answers/s ÷ direct', comparison(s2).answers_per_s_ratio, '×', { min: 0.95 });
    add('S2 added first token p50', comparison(s2).added_ttft_p50_ms, 'ms', { max: 60 });
    add('S2 API + worker CPU per answer', productCpu(s2.agentry), 'ms', { max: 60 });
  }
  add('CPU per delta, API + worker', perDelta?.agentry_api_worker_ms, 'ms', { max: 0.1 });
  for (const r of results)
    add(`${r.scenario.id} added delivery delay p95`, comparison(r).added_delivery_p95_ms, 'ms', { max: 50 });
  const s3 = by('S3');
  if (s3) {
    add('S3 answers/s ÷ direct', comparison(s3).answers_per_s_ratio, '×', { min: 0.9 });
    add('S3 added first token p95', comparison(s3).added_ttft_p95_ms, 'ms', { max: 1000 });
    add('S3 RSS peak API + worker', s3.agentry?.rss_peak_mb, 'MB', { max: 1536 });
  }
  for (const r of results)
    add(`${r.scenario.id} heartbeats per minute of stream`, r.agentry?.heartbeats?.per_stream_minute, '', {
      max: 12,
    });
  const e1 = by('E1');
  if (e1) {
    add('E1 answers/s ÷ direct', comparison(e1).answers_per_s_ratio, '×', { min: 0.9 });
    add('E1 added first token p50', comparison(e1).added_ttft_p50_ms, 'ms', { max: 150 });
  }
  return figures;
}

export const printTargets = (figures: Figure[]): void =>
  printTable('streams: issue 25 targets (Agentry against direct in this run)', figures);
