// Statistics and reporting of the benchmarks: percentiles, the figures table with targets, the
// machine description and bench/results.json.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './env';

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export const elapsedMs = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

export const round = (n: number, digits = 2): number => Number(n.toFixed(digits));

export interface Figure {
  figure: string;
  value: number;
  unit: string;
  /** Target, e.g. { max: 5 } or { min: 1000 }; absent for context figures (baselines). */
  target?: { min?: number; max?: number };
}

const met = (f: Figure): boolean | null =>
  !f.target
    ? null
    : (f.target.min === undefined || f.value >= f.target.min) &&
      (f.target.max === undefined || f.value <= f.target.max);

/** "pass by 3.2 ms" / "FAIL by 12.3 ms (1.35× target)": the margin to the target either way. */
function verdict(f: Figure): string {
  const ok = met(f);
  if (ok === null) return '';
  const goal = f.target!.min ?? f.target!.max!;
  const margin = round(Math.abs(f.value - goal), 2);
  const by = `by ${margin}${f.unit ? ` ${f.unit}` : ''}`;
  if (ok) return `pass ${by}`;
  return Number.isFinite(f.value) && goal !== 0 ? `FAIL ${by} (${round(f.value / goal, 2)}× target)` : 'FAIL';
}

/** Rows of cells as an aligned text table under a title. */
export function printRows(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  console.log(`\n${title}\n`);
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(r));
  console.log('');
}

/** The table: figure, value, target, met? (pass or fail, and by how much). */
export function printTable(title: string, figures: Figure[]): void {
  const rows = figures.map((f) => {
    const target = !f.target
      ? '—'
      : f.target.min !== undefined
        ? `≥ ${f.target.min} ${f.unit}`.trim()
        : `≤ ${f.target.max} ${f.unit}`.trim();
    return [f.figure, `${f.value} ${f.unit}`.trim(), target, verdict(f)];
  });
  printRows(title, ['figure', 'value', 'target', 'met?'], rows);
}

export const figuresJson = (figures: Figure[]) => figures.map((f) => ({ ...f, met: met(f) }));

export const machine = () => ({
  cores: os.cpus().length,
  load_average_1m: round(os.loadavg()[0]!, 2),
  cpu: os.cpus()[0]?.model ?? 'unknown',
  memory_gb: round(os.totalmem() / 2 ** 30, 1),
  node: process.version,
});

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
}

/** n, p50 / p95 / p99, mean and max of unsorted samples, rounded to 0.01. */
export const summarise = (samples: number[]): Summary => ({
  n: samples.length,
  p50: round(percentile(samples, 50)),
  p95: round(percentile(samples, 95)),
  p99: round(percentile(samples, 99)),
  mean: round(samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length)),
  max: round(samples.length ? Math.max(...samples) : NaN),
});

/** Merges `value` under `key` into bench/results.json (other benchmarks' keys stay). */
export function writeResults(key: string, value: unknown): string {
  const file = path.join(ROOT, 'bench', 'results.json');
  let current: Record<string, unknown> = {};
  try {
    current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // missing or unreadable: start afresh
  }
  current[key] = value;
  writeFileSync(file, `${JSON.stringify(current, null, 2)}\n`);
  return file;
}
