// What the API, the worker and the workflows agree on: task queue default, workflow inputs and
// results, failure types and the one table from failure type to HTTP status. Imports nothing, so
// the workflow sandbox and every process can share it.

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

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/** Input of the `llmQuery` workflow (LLM-4): ids and parameters only, never content (SPEC §9.3). */
export interface LlmQueryInput {
  executionId: string;
  llmId: string;
  /** `execution_payloads` row holding the encrypted messages. */
  requestPayloadId: string;
  temperature?: number;
  profiles: ExecutionProfiles;
}

export interface CallModelInput {
  executionId: string;
  llmId: string;
  requestPayloadId: string;
  temperature?: number;
  noProgressMs: number;
}

export interface CallModelResult {
  answerPayloadId: string;
  usage: Usage;
  attempt: number;
}

export interface ExecutionResult {
  answerPayloadId: string;
  usage: Usage;
}

export interface FinishExecutionInput {
  executionId: string;
  status: 'succeeded' | 'failed' | 'cancelled';
  usage?: Usage;
  error?: { status: number; type: string };
}

export interface PublishErrorInput {
  executionId: string;
  status: number;
  detail: string;
}

export const WORKFLOW_ID_PREFIX = 'execution-';
export const workflowIdFor = (executionId: string): string => `${WORKFLOW_ID_PREFIX}${executionId}`;

/** Failure types carried by ApplicationFailure.type. */
export const FailureType = {
  LlmRateLimited: 'Llm.RateLimited',
  LlmServerError: 'Llm.ServerError',
  LlmUnreachable: 'Llm.Unreachable',
  LlmStalled: 'Llm.Stalled',
  LlmBadStream: 'Llm.BadStream',
  LlmRejected: 'Llm.Rejected',
  NotFound: 'Execution.NotFound',
  InfraUnavailable: 'Infra.Unavailable',
} as const;
export type FailureTypeName = (typeof FailureType)[keyof typeof FailureType];

/** Failure types that must not be retried. */
export const NON_RETRYABLE: readonly string[] = [
  FailureType.LlmRejected,
  FailureType.NotFound,
  'Embedding.Rejected',
  'Ingestion.DocumentGone',
];

/**
 * The single failure → HTTP status table for executions (EX-7, LLM-3): a model that still
 * fails after the last attempt is 502 whatever its status was; cancellation is 499.
 */
export function statusForFailure(type: string | undefined, cancelled: boolean): number {
  if (cancelled) return 499;
  if (type?.startsWith('Llm.')) return 502;
  if (type === FailureType.NotFound) return 404;
  return 503;
}

/** Details attached to model failures: what the upstream said, never our secrets. */
export interface UpstreamFailureDetails {
  upstreamStatus?: number;
  message: string;
}

/** Retry and batching policy of document ingestion (DESIGN §3: embed batches 60 s, 10 attempts). */
export interface IngestionProfile extends RetryProfile {
  heartbeatTimeoutMs: number;
  /** Fragments per embedding activity. */
  batchSize: number;
  /** Embedding activities running at once for one document. */
  parallelism: number;
}

export interface DocumentIngestionInput {
  documentVersionId: string;
  profile: IngestionProfile;
}

export const ingestionWorkflowId = (documentVersionId: string): string => `ingestion-${documentVersionId}`;

export const IngestionFailure = {
  EmbeddingUnavailable: 'Embedding.Unavailable',
  EmbeddingRejected: 'Embedding.Rejected',
  DocumentGone: 'Ingestion.DocumentGone',
} as const;
