// The phases of the execution benchmark over its columns (bench/lib/execution-columns.ts):
// sequential executions interleaved across the columns (round i runs every column once, in an
// order rotated by i, so drifting machine load weighs on all alike), and a measured closed loop
// of concurrent clients for one column at a time.
import type { ClosedLoop } from './closed-loop';
import type { Column, ColumnName, ColumnRun } from './execution-columns';
import { measurePhase } from './load-phase';

export async function sequentialRounds(
  columns: Column[],
  warmup: number,
  rounds: number,
  interrupted: () => boolean,
): Promise<Map<ColumnName, ColumnRun[]>> {
  const runs = new Map<ColumnName, ColumnRun[]>(columns.map((c) => [c.name, []]));
  for (let i = 0; i < warmup + rounds; i++) {
    if (interrupted()) throw new Error('interrupted');
    for (let k = 0; k < columns.length; k++) {
      const column = columns[(i + k) % columns.length]!;
      const run = await column.one(i);
      if (i >= warmup) runs.get(column.name)!.push(run);
    }
  }
  return runs;
}

/** `clients` concurrent clients of `column` for `durationS`, with its processes' CPU and RSS. */
export async function concurrentPhase(
  column: Column,
  clients: number,
  durationS: number,
  interrupted: () => boolean,
) {
  if (!column.loop) throw new Error(`${column.name} has no concurrent phase`);
  const loop = column.loop;
  let workflowIds: string[] = [];
  const phase = await measurePhase(
    { processes: column.processes, ...(column.readyUrl ? { readyUrl: column.readyUrl } : {}) },
    async (): Promise<ClosedLoop> => {
      const result = await loop(clients, durationS, interrupted);
      workflowIds = result.workflowIds;
      return result;
    },
  );
  return { clients, ...phase, workflowIds };
}

export type ConcurrentPhase = Awaited<ReturnType<typeof concurrentPhase>>;
