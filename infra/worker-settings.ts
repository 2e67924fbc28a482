// What a worker process serves and how it stops (issue 36: pools on Kubernetes): which of the two
// task queues it polls, how long a shutdown lets running activities finish, the event-loop
// bound of /livez, and optional Worker Versioning, as the Temporal Worker Controller sets it.
import type { Reader } from './config-reader';

/** `executions`: the task queue (every workflow, the model calls); `tasks`: its `-tasks` queue. */
export const WORKER_QUEUES = ['executions', 'tasks'] as const;
export type WorkerQueue = (typeof WORKER_QUEUES)[number];

const BEHAVIORS = { pinned: 'PINNED', 'auto-upgrade': 'AUTO_UPGRADE' } as const;

export interface WorkerVersioning {
  deploymentName: string;
  buildId: string;
  /** Workflows that say nothing stay on the version that started them (PINNED) or move on. */
  defaultBehavior: (typeof BEHAVIORS)[keyof typeof BEHAVIORS];
}

export interface WorkerSettings {
  queues: WorkerQueue[];
  /**
   * After SIGTERM, running activities (model streams) have this long to finish; then they are
   * cancelled and fail, so that Temporal retries them on another worker at once (a resumable
   * LLM's stream is resumed there) instead of after a heartbeat timeout.
   */
  shutdownGraceMs: number;
  /** /livez fails when the event loop was blocked longer than this within the last 10 s. */
  maxLoopDelayMs: number;
  versioning: WorkerVersioning | undefined;
}

export function readWorkerSettings(r: Reader): WorkerSettings {
  return {
    queues: readQueues(r),
    // Under Kubernetes' and compose's default 30 s stop grace, with 5 s to hand streams over.
    shutdownGraceMs: r.int('AGENTRY_WORKER_SHUTDOWN_GRACE_MS', 25_000, 0, 3_600_000),
    maxLoopDelayMs: r.int('AGENTRY_WORKER_LIVENESS_LOOP_DELAY_MS', 5000, 100, 600_000),
    versioning: readVersioning(r),
  };
}

function readQueues(r: Reader): WorkerQueue[] {
  const raw = r.str('AGENTRY_WORKER_QUEUES', WORKER_QUEUES.join(','));
  const names = raw.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(WORKER_QUEUES as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0) {
    r.errors.push(
      `AGENTRY_WORKER_QUEUES must list one or both of ${WORKER_QUEUES.join(', ')} (got "${raw}")`,
    );
    return [...WORKER_QUEUES];
  }
  return WORKER_QUEUES.filter((q) => names.includes(q));
}

/** TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID: both, or neither. */
function readVersioning(r: Reader): WorkerVersioning | undefined {
  const deploymentName = r.str('TEMPORAL_DEPLOYMENT_NAME');
  const buildId = r.str('TEMPORAL_WORKER_BUILD_ID');
  const behavior = r.oneOf(
    'AGENTRY_WORKER_VERSIONING_BEHAVIOR',
    Object.keys(BEHAVIORS) as (keyof typeof BEHAVIORS)[],
    'pinned',
  );
  if (deploymentName === undefined && buildId === undefined) return undefined;
  if (deploymentName === undefined || buildId === undefined) {
    r.errors.push('TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID must be set together');
    return undefined;
  }
  return { deploymentName, buildId, defaultBehavior: BEHAVIORS[behavior] };
}
