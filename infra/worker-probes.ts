// The worker's own HTTP port (AGENTRY_WORKER_METRICS_PORT): Prometheus text on /metrics, and the
// probes Kubernetes asks (issue 36):
// - /readyz: 200 once every SDK worker of this process polls (state RUNNING); 503 before, and
//   from the moment a shutdown starts (the worker stops polling);
// - /livez: 200 unless a worker failed or the event loop was blocked longer than the bound
//   within the last probe period (infra/event-loop-watchdog.ts); a wedged process is restarted.
// Neither asks PostgreSQL, Redis or Temporal: an outage of a dependency is not cured by restarting
// or unlisting workers (their polls and activities retry), so it must fail neither probe. The
// port opens before the workers exist, so /readyz says 503 while they start.
import { createServer, type Server, type ServerResponse } from 'node:http';

/** The SDK workers' states by queue (`RUNNING`, `DRAINING`, `FAILED`...), as WorkerHandle says. */
export type WorkerStates = Record<string, string>;

export interface WorkerProbeSources {
  /** Prometheus text of the process. */
  metrics(): Promise<string>;
  contentType: string;
  /** The workers' states; undefined until they are created. */
  states(): WorkerStates | undefined;
  /** The longest recent event-loop delay, ms. */
  loopDelayMs(): number;
  /** /livez fails above this delay. */
  maxLoopDelayMs: number;
}

interface Verdict {
  ok: boolean;
  body: Record<string, unknown>;
}

export function readiness(states: WorkerStates | undefined): Verdict {
  const ok = states !== undefined && Object.values(states).every((s) => s === 'RUNNING');
  return { ok, body: { status: ok ? 'ready' : 'not ready', workers: states ?? {} } };
}

export function liveness(sources: Omit<WorkerProbeSources, 'metrics' | 'contentType'>): Verdict {
  const states = sources.states() ?? {};
  const failed = Object.keys(states).filter((queue) => states[queue] === 'FAILED');
  const delayMs = Math.round(sources.loopDelayMs());
  const blocked = delayMs > sources.maxLoopDelayMs;
  const ok = failed.length === 0 && !blocked;
  return {
    ok,
    body: {
      status: ok ? 'live' : 'not live',
      ...(failed.length > 0 ? { failed } : {}),
      eventLoopDelayMs: delayMs,
      maxEventLoopDelayMs: sources.maxLoopDelayMs,
    },
  };
}

export function createWorkerProbeServer(sources: WorkerProbeSources): Server {
  const answer = (res: ServerResponse, verdict: Verdict): void => {
    res
      .writeHead(verdict.ok ? 200 : 503, { 'Content-Type': 'application/json' })
      .end(JSON.stringify(verdict.body));
  };
  return createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/readyz') return answer(res, readiness(sources.states()));
    if (path === '/livez') return answer(res, liveness(sources));
    if (path !== '/metrics') return void res.writeHead(404).end();
    sources.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': sources.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
}
