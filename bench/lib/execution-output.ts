// Prints the execution benchmark's tables and targets and writes its entry in bench/results.json.
import {
  compare,
  costRows,
  latencyRows,
  targetFigures,
  type Comparison,
  type Results,
} from './execution-report';
import type { StatementFigures } from './execution-statements';
import { figuresJson, machine, printRows, printTable, writeResults } from './report';

interface Settings {
  clients: number;
  streams: number;
  executions: number;
  fragments: number;
  answerWords: number;
  deltas_per_answer?: number | undefined;
}

function printTimeline(label: string, steps: { event: string; median_at_ms: number; step_ms: number }[]) {
  printRows(
    `${label}: where the time to first token goes (median, ms from the client's send)`,
    ['event', 'at', 'step'],
    steps.map((r) => [r.event, r.median_at_ms.toFixed(2), r.step_ms.toFixed(2)]),
  );
}

/** Prints and writes the report; true when an execution or a readiness check failed. */
export function printExecutionReport(
  results: Results,
  settings: Settings,
  runSeconds: number,
  statements?: StatementFigures,
): boolean {
  const comparisons: { production?: Comparison; embedded?: Comparison } = {
    production: compare(results, 'production'),
    embedded: compare(results, 'embedded'),
  };
  printRows(
    `execution: agent with 1 query + 1 similarity placeholder (k 5), ${settings.fragments} fragments, ` +
      `${settings.deltas_per_answer ?? settings.answerWords}-delta answers, zero-latency fake model; ` +
      `c=1: ${settings.executions} interleaved rounds, c=${settings.clients}: closed loop (ms, executions/s)`,
    [
      'column',
      'c',
      'TTFT p50',
      'p95',
      'p99',
      'total p50',
      'exec/s',
      'errors',
      'added TTFT p50 / p95',
      'added ÷ floor p50 / p95',
      'exec/s ÷ floor',
    ],
    latencyRows(results, comparisons),
  );
  printRows(
    `cost: CPU ms per execution at c=${settings.clients} (from /proc); history per execution at c=1; RSS peak at ${settings.streams} streams`,
    [
      'column',
      'own processes',
      'PostgreSQL',
      'Temporal',
      'machine busy / available s',
      'events / WFTs / activities / LA markers',
      'RSS',
    ],
    costRows(results),
  );
  const figures = [
    ...targetFigures('production', comparisons.production!, settings.clients, settings.streams),
    ...targetFigures('embedded', comparisons.embedded!, settings.clients, settings.streams),
    ...(statements
      ? [
          {
            figure: `production: SQL statements per execution (c=${settings.clients}, ${statements.concurrent.executions} executions)`,
            value: statements.concurrent.per_execution,
            unit: '',
            target: { max: 8 },
          },
          {
            figure: `production: SQL statements per execution (c=1, ${statements.sequential.executions}; lookups re-read each 1 s)`,
            value: statements.sequential.per_execution,
            unit: '',
          },
        ]
      : []),
  ];
  printTable('targets (DESIGN §6)', figures);
  for (const mode of ['production', 'embedded'] as const) {
    const col = results[mode]!;
    if (col.timeline?.length) printTimeline(col.label, col.timeline);
    for (const phase of [col.concurrent, col.streams]) {
      if (phase?.errors)
        console.log(`${col.label} errors (c=${phase.clients}): ${phase.first_errors.join(' | ')}`);
      if (phase?.readyz?.failures)
        console.log(`${col.label} first /readyz failure: ${phase.readyz.firstFailure}`);
    }
  }
  const eager = results['floor-eager']?.sequential.eager_fraction;
  if (eager !== undefined)
    console.log(
      `floor, eager start: the server honoured requestEagerStart in ${Math.round(eager * 100)} % of the runs`,
    );
  for (const col of Object.values(results)) {
    if (col.history?.sequential)
      console.log(`${col.label} history: ${col.history.sequential.first_sequence}`);
  }
  const strip = (r: Results) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [
        k,
        {
          ...v,
          ...(v.concurrent ? { concurrent: { ...v.concurrent, workflowIds: undefined } } : {}),
          ...(v.streams ? { streams: { ...v.streams, workflowIds: undefined } } : {}),
        },
      ]),
    );
  const prod = comparisons.production!;
  const emb = comparisons.embedded!;
  const file = writeResults('execution', {
    date: new Date().toISOString(),
    machine: machine(),
    run_seconds: runSeconds,
    settings,
    overhead_p50_ms: prod.added_ttft_ms.p50,
    overhead_p95_ms: prod.added_ttft_ms.p95,
    overhead_p99_ms: prod.added_ttft_ms.p99,
    throughput_per_s: prod.throughput_per_s,
    floor_throughput_per_s: results.floor?.concurrent?.executions_per_s ?? null,
    floor_overhead_p50_ms: results.floor?.sequential.ttft_ms.p50 ?? null,
    floor_overhead_p95_ms: results.floor?.sequential.ttft_ms.p95 ?? null,
    floor_eager_overhead_p50_ms: results['floor-eager']?.sequential.ttft_ms.p50 ?? null,
    embedded_overhead_p50_ms: emb.added_ttft_ms.p50,
    embedded_overhead_p95_ms: emb.added_ttft_ms.p95,
    embedded_throughput_per_s: emb.throughput_per_s,
    modes: { production: prod, embedded: emb },
    statements: statements ?? null,
    columns: strip(results),
    figures: figuresJson(figures),
  });
  console.log(`\nwritten to ${file} (run time ${runSeconds} s)`);
  return prod.errors + emb.errors + prod.readyz_failures + emb.readyz_failures > 0;
}
