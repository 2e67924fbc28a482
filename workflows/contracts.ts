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
  RenderPlaceholderInValue: 'Render.PlaceholderInValue',
  RetrievalEmbeddingFailed: 'Retrieval.EmbeddingFailed',
  InfraUnavailable: 'Infra.Unavailable',
} as const;
export type FailureTypeName = (typeof FailureType)[keyof typeof FailureType];

/** Failure types that must not be retried. */
export const NON_RETRYABLE: readonly string[] = [
  FailureType.LlmRejected,
  FailureType.NotFound,
  FailureType.RenderPlaceholderInValue,
  'Embedding.Rejected',
  'Ingestion.DocumentGone',
];

/**
 * The single failure → HTTP status table for executions (EX-7, LLM-3): a model that still
 * fails after the last attempt is 502 whatever its status was; cancellation is 499.
 */
export function statusForFailure(type: string | undefined, cancelled: boolean): number {
  if (cancelled) return 499;
  if (type?.startsWith('Llm.') || type === FailureType.RetrievalEmbeddingFailed) return 502;
  if (type?.startsWith('Render.')) return 400;
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

/** Input of the `agentExecution` workflow (SPEC §9.3): ids and parameters only. */
export interface AgentExecutionInput {
  executionId: string;
  agentId: string;
  agentVersion: number;
  pipelineId: string;
  llmId: string;
  /** `execution_payloads` row holding {values, classifications, filters}. */
  requestPayloadId: string;
  /** Names of the retrieval placeholders, in the order of the placeholders list (EX-2). */
  retrievalPlaceholders: string[];
  temperature?: number;
  /** Set when tracing (TR-2): the trace is stored before the model call. */
  traceId?: string;
  apiKeyId: string;
  profiles: ExecutionProfiles;
}

export interface FragmentRef {
  id: string;
  score: number;
}

export interface RetrieveInput {
  executionId: string;
  agentId: string;
  agentVersion: number;
  pipelineId: string;
  requestPayloadId: string;
  placeholder: string;
}

export interface RenderInput {
  executionId: string;
  agentId: string;
  agentVersion: number;
  requestPayloadId: string;
  /** Retrieval placeholder → fragment ids and scores, in rank order. */
  retrievals: Record<string, FragmentRef[]>;
}

export interface StoreTraceInput {
  executionId: string;
  traceId: string;
  apiKeyId: string;
  requestPayloadId: string;
  renderedPayloadId: string;
  retrievals: Record<string, FragmentRef[]>;
}
