// The streams floor's settings (issue 35): those of Agentry's model-call worker and LLM activity,
// read from the same variables with the same defaults (infra/config.ts, start-worker.ts,
// activities/model-attempt.ts), so that an AGENTRY_* override moves both columns alike.
import type { ActivityOptions } from '@temporalio/common';

const setting = (name: string, fallback: number): number => {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number(raw);
};

const modelStreams = setting('AGENTRY_WORKER_MODEL_STREAMS', 1000);
const heartbeatTimeoutMs = setting('AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS', 20_000);
/** Four heartbeats per heartbeat timeout, as Agentry's model activity (`heartbeatEveryMs`). */
const beatMs = Math.max(1, Math.floor(heartbeatTimeoutMs / 4));

/** What the floor runs with (bench/README.md, "streams"; results.json `floor_settings`). */
export const FLOOR_SETTINGS = {
  worker: {
    maxConcurrentActivityTaskExecutions: modelStreams,
    maxCachedWorkflows: setting('AGENTRY_WORKER_CACHED_WORKFLOWS', modelStreams + 100),
    maxConcurrentWorkflowTaskExecutions: 20,
    maxConcurrentWorkflowTaskPolls: setting('AGENTRY_WORKFLOW_TASK_POLLS', 1),
    /** Agentry's: the activity's own cadence, each beat sent at once. */
    maxHeartbeatThrottleIntervalMs: beatMs,
  },
  /** Heartbeats: one at the attempt's start, then every heartbeat timeout ÷ 4. */
  heartbeatEveryMs: beatMs,
  activity: {
    startToCloseTimeout: setting('AGENTRY_LLM_START_TO_CLOSE_MS', 600_000),
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: {
      maximumAttempts: setting('AGENTRY_LLM_MAX_ATTEMPTS', 4),
      initialInterval: setting('AGENTRY_LLM_RETRY_INITIAL_MS', 1000),
      backoffCoefficient: setting('AGENTRY_LLM_RETRY_BACKOFF', 2),
      maximumInterval: setting('AGENTRY_LLM_RETRY_MAX_INTERVAL_MS', 30_000),
    },
  } satisfies ActivityOptions,
};
