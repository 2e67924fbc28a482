// The retry, timeout and batching settings of each kind of activity: parsed from the environment
// by infra/config.ts and applied by the workflows to their activity proxies. Types only, so every
// room, the workflow sandbox included, may use them.

/** One activity kind's timeout and retry policy (a Temporal RetryPolicy in milliseconds). */
export interface RetryProfile {
  startToCloseMs: number;
  maximumAttempts: number;
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
}

export interface LlmProfile extends RetryProfile {
  heartbeatTimeoutMs: number;
  noProgressMs: number;
}

export interface ExecutionProfiles {
  llm: LlmProfile;
  bookkeeping: RetryProfile;
}

/** Retry and batching policy of document ingestion (DESIGN §3: embed batches 60 s, 10 attempts). */
export interface IngestionProfile extends RetryProfile {
  heartbeatTimeoutMs: number;
  /** Fragments per embedding activity. */
  batchSize: number;
  /** Embedding activities running at once for one document. */
  parallelism: number;
}
