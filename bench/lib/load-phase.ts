// One measured load phase: whatever `body` runs (closed-loop clients), with the CPU of each named
// process, PostgreSQL, the Temporal dev server and the machine across it, the RSS of the named
// processes sampled every second, and GET /readyz polled every 500 ms when a URL is given.
import { cpuBetween, cpuSeconds, cpuSnapshot, rssBytes } from './cpu';
import { nowMs } from './env';
import type { ClosedLoop } from './closed-loop';
import { round, summarise } from './report';

const mb = (bytes: number) => round(bytes / 2 ** 20, 1);

function rssStats(values: number[]) {
  if (values.length === 0) return null;
  return {
    max_mb: mb(Math.max(...values)),
    mean_mb: mb(values.reduce((a, b) => a + b, 0) / values.length),
    last_mb: mb(values[values.length - 1]!),
  };
}

/** Polls `url` every 500 ms until `stopped()`; counts the answers that were not 200. */
async function pollReadiness(url: string, stopped: () => boolean) {
  const readiness = { checks: 0, failures: 0, maxMs: 0, firstFailure: '' };
  while (!stopped()) {
    const t = nowMs();
    let status = 0;
    try {
      status = (await fetch(url, { signal: AbortSignal.timeout(5000) })).status;
    } catch (err) {
      readiness.firstFailure ||= (err as Error).message;
    }
    readiness.checks += 1;
    readiness.maxMs = Math.max(readiness.maxMs, nowMs() - t);
    if (status !== 200) {
      readiness.failures += 1;
      readiness.firstFailure ||= `status ${status}`;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { ...readiness, maxMs: round(readiness.maxMs), always_200: readiness.failures === 0 };
}

export interface PhaseOptions<N extends string> {
  /** Processes to account for by name (one pid may appear under one name only). */
  processes: Record<N, number | undefined>;
  readyUrl?: string;
}

export async function measurePhase<N extends string>(
  options: PhaseOptions<N>,
  body: () => Promise<ClosedLoop>,
) {
  const names = Object.keys(options.processes) as N[];
  const pids = names.map((n) => options.processes[n]);
  const rss: (number | null)[][] = [];
  let stopped = false;
  const sampler = (async () => {
    while (!stopped) {
      rss.push(pids.map(rssBytes));
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  const readiness = options.readyUrl ? pollReadiness(options.readyUrl, () => stopped) : null;
  const cpuBefore = cpuSnapshot();
  const processBefore = pids.map(cpuSeconds);
  const start = nowMs();
  const loop = await body();
  const wallS = (nowMs() - start) / 1000;
  const cpu = cpuBetween(cpuBefore, cpuSnapshot());
  const processCpu = {} as Record<`${N}_s`, number | null>;
  names.forEach((name, i) => {
    const [a, b] = [processBefore[i] ?? null, cpuSeconds(pids[i])];
    processCpu[`${name}_s` as const] = a === null || b === null ? null : round(b - a, 1);
  });
  stopped = true;
  await sampler;
  const perProcess = {} as Record<N, ReturnType<typeof rssStats>>;
  names.forEach((name, i) => {
    perProcess[name] = rssStats(rss.map((s) => s[i]).filter((v): v is number => v != null));
  });
  return {
    wall_s: round(wallS, 2),
    completed: loop.completed,
    errors: loop.errors.length,
    first_errors: [...new Set(loop.errors)].slice(0, 5),
    executions_per_s: round(loop.completed / wallS, 1),
    ttft_ms: summarise(loop.ttft),
    total_ms: summarise(loop.total),
    rss: {
      samples: rss.length,
      ...perProcess,
      sum_max_mb: mb(Math.max(0, ...rss.map((s) => s.reduce<number>((a, b) => a + (b ?? 0), 0)))),
    },
    ...(readiness ? { readyz: await readiness } : {}),
    cpu: { ...cpu, ...processCpu },
  };
}

export type PhaseResult<N extends string> = Awaited<ReturnType<typeof measurePhase<N>>>;
