// The streams benchmark's targets (DESIGN §6, issue 35): per scenario Agentry against the
// bare-Temporal floor of the same run (answers/s ≥ 0.9×, first token p50 ≤ the floor's + 100 ms
// and p95 ≤ + 300 ms, CPU per answer of API + worker + Temporal + PostgreSQL + Redis ≤ 1.15×),
// printed as a table with yes / no; then every target as pass / fail with its margin, with those
// that are not against the floor: errors, the cost of a token (CPU per delta, added delivery
// delay against direct), heartbeats per minute of stream, S3's RSS.
import { printRows, printTable, type Figure } from './report';
import { comparison, n, signedMs, totalCpu, type cpuPerDelta, type ScenarioResult } from './streams-report';

export const FLOOR_TARGETS = { answersRatio: 0.9, ttftP50Ms: 100, ttftP95Ms: 300, cpuRatio: 1.15 };

const yes = (v: number | null, ok: (v: number) => boolean) => (v === null ? '—' : ok(v) ? 'yes' : 'no');

export function printFloorComparison(results: ScenarioResult[]): void {
  const t = FLOOR_TARGETS;
  const rows = results.flatMap((r) => {
    if (!r.agentry || !r.floor) return [];
    const c = comparison(r).floor;
    const added = Object.entries(c.cpu_added_ms).map(([k, v]) => `${k} ${v >= 0 ? '+' : ''}${v}`);
    return [
      [
        r.scenario.id,
        `${n(c.answers_per_s_ratio, 2)}×`,
        yes(c.answers_per_s_ratio, (v) => v >= t.answersRatio),
        signedMs(c.ttft_p50_ms),
        yes(c.ttft_p50_ms, (v) => v <= t.ttftP50Ms),
        signedMs(c.ttft_p95_ms),
        yes(c.ttft_p95_ms, (v) => v <= t.ttftP95Ms),
        `${n(totalCpu(r.agentry))} ÷ ${n(totalCpu(r.floor))} = ${n(c.cpu_total_ratio, 2)}×`,
        yes(c.cpu_total_ratio, (v) => v <= t.cpuRatio),
        added.join(', '),
      ],
    ];
  });
  printRows(
    'streams: Agentry ÷ the bare-Temporal floor, same scenario, same run (DESIGN §6)',
    [
      'scenario',
      'answers/s',
      `≥ ${t.answersRatio}×`,
      'first token p50',
      `≤ +${t.ttftP50Ms}`,
      'p95',
      `≤ +${t.ttftP95Ms}`,
      'CPU ms / answer (total)',
      `≤ ${t.cpuRatio}×`,
      'CPU ms / answer added, per process',
    ],
    rows,
  );
}

export function targetFigures(results: ScenarioResult[], perDelta: ReturnType<typeof cpuPerDelta>): Figure[] {
  const t = FLOOR_TARGETS;
  const figures: Figure[] = [];
  const add = (figure: string, value: number | null | undefined, unit: string, target: Figure['target']) => {
    if (value !== null && value !== undefined) figures.push({ figure, value, unit, target });
  };
  for (const r of results)
    for (const col of [r.floor, r.agentry])
      if (col)
        add(`${r.scenario.id} ${col.column}: errors + inexact answers`, col.errors + col.inexact, '', {
          max: 0,
        });
  for (const r of results) {
    const c = comparison(r).floor;
    const id = r.scenario.id;
    add(`${id} answers/s, Agentry ÷ floor`, c.answers_per_s_ratio, '×', { min: t.answersRatio });
    add(`${id} first token p50, Agentry − floor`, c.ttft_p50_ms, 'ms', { max: t.ttftP50Ms });
    add(`${id} first token p95, Agentry − floor`, c.ttft_p95_ms, 'ms', { max: t.ttftP95Ms });
    add(
      `${id} CPU per answer (API + worker + Temporal + PG + Redis), Agentry ÷ floor`,
      c.cpu_total_ratio,
      '×',
      {
        max: t.cpuRatio,
      },
    );
  }
  add('CPU per delta, Agentry API + worker', perDelta?.agentry_api_worker_ms, 'ms', { max: 0.1 });
  for (const r of results)
    add(
      `${r.scenario.id} added delivery delay p95 (Agentry − direct)`,
      comparison(r).added_delivery_p95_ms,
      'ms',
      {
        max: 50,
      },
    );
  for (const r of results)
    add(`${r.scenario.id} heartbeats per minute of stream`, r.agentry?.heartbeats?.per_stream_minute, '', {
      max: 12,
    });
  const s3 = results.find((r) => r.scenario.id === 'S3');
  add('S3 RSS peak API + worker', s3?.agentry?.rss_peak_mb, 'MB', { max: 1536 });
  return figures;
}

export const printTargets = (figures: Figure[]): void =>
  printTable('streams: DESIGN §6 targets (Agentry against the floor and the model of this run)', figures);
