// What the API, the worker and the workflows agree on about executions and ingestion: workflow
// inputs and results, failure types and the one table from failure type to HTTP status. Imports
// nothing but domain types, so the workflow sandbox and every process can share it.
import type { ExecutionProfiles, IngestionProfile } from '../../domain/activity-profiles';

export type {
  ExecutionProfiles,
  IngestionProfile,
  LlmProfile,
  RetryProfile,
} from '../../domain/activity-profiles';

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
  /**
   * Added to the activity's attempt number in relay events: the next LLM of a routing policy
   * (PC-10) continues the attempt count, so readers reset instead of dropping its events.
   */
  attemptOffset?: number;
  /** A payload whose object is merged into the final `done` event (the gateway's executionChain). */
  doneExtraPayloadId?: string;
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

const WORKFLOW_ID_PREFIX = 'execution-';
export const workflowIdFor = (executionId: string): string => `${WORKFLOW_ID_PREFIX}${executionId}`;

/** Failure types carried by ApplicationFailure.type. */
/**
 * The queue of a worker's activities other than the model call (ingestion, chains' steps, the
 * retention sweep): slots of their own, so that model streams and these never starve each other.
 * The model call stays on the workflows' queue, where it is dispatched eagerly (docs/operations.md,
 * "Sizing a worker").
 */
export const tasksQueueOf = (taskQueue: string): string => `${taskQueue}-tasks`;

export const FailureType = {
  LlmRateLimited: 'Llm.RateLimited',
  LlmServerError: 'Llm.ServerError',
  LlmUnreachable: 'Llm.Unreachable',
  LlmStalled: 'Llm.Stalled',
  LlmBadStream: 'Llm.BadStream',
  LlmRejected: 'Llm.Rejected',
  /** The model answered with a refusal instead of an answer (issue 33): final, not retried. */
  LlmRefused: 'Llm.Refused',
  NotFound: 'Execution.NotFound',
  RenderPlaceholderInValue: 'Render.PlaceholderInValue',
  /** SPEC §18: the rendered prompt exceeds 2 MB. */
  RenderTooLarge: 'Render.TooLarge',
  RetrievalEmbeddingFailed: 'Retrieval.EmbeddingFailed',
  InfraUnavailable: 'Infra.Unavailable',
  /** A model stream stopped by its execution's stop notice (the workflow is being cancelled). */
  Cancelled: 'Execution.Cancelled',
} as const;

/** Failure types that must not be retried. */
export const NON_RETRYABLE: readonly string[] = [
  FailureType.LlmRejected,
  FailureType.LlmRefused,
  FailureType.NotFound,
  FailureType.Cancelled,
  FailureType.RenderPlaceholderInValue,
  FailureType.RenderTooLarge,
  'Embedding.Rejected',
  'Ingestion.DocumentGone',
  'Render.ReferenceFatal',
  'Render.ReferenceInvalid',
  'Render.UnresolvedVariables',
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

export interface DocumentIngestionInput {
  documentVersionId: string;
  profile: IngestionProfile;
}

export const ingestionWorkflowId = (documentVersionId: string): string => `ingestion-${documentVersionId}`;

/** Input of `documentBatchIngestion`: a `documents:batch` request's batch, by id (issue 15). */
export interface DocumentBatchIngestionInput {
  batchId: string;
  profile: IngestionProfile;
}

export const batchIngestionWorkflowId = (batchId: string): string => `ingestion-batch-${batchId}`;

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
  /** PC-12: some template holds a `{{prompt:...}}` reference (planned before rendering). */
  hasReferences?: boolean;
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
  /** PV-2: epoch ms of the workflow's start, the clock of `current_datetime_utc`. */
  nowMs: number;
  apiKeyId?: string;
  /** PC-12: the reference plan and the child executions that answered its EXECUTE slots. */
  planPayloadId?: string;
  childExecutionIds?: Record<number, string>;
}

/** A child execution for an EXECUTE reference that missed the cache (PC-5). */
export interface ReferenceChild {
  slot: number;
  executionId: string;
  promptId: string;
  depth: number;
  ancestors: string[];
  cacheKey: string;
  fallbackLlmId: string;
}

export interface PlanResult {
  planPayloadId: string;
  children: ReferenceChild[];
}

export interface PreparedPromptExecution extends PlanResult {
  llmIds: string[];
  temperature?: number;
}

export interface StoreTraceInput {
  executionId: string;
  traceId: string;
  apiKeyId: string;
  requestPayloadId: string;
  renderedPayloadId: string;
  retrievals: Record<string, FragmentRef[]>;
}

/** Why a prompt's references or variables cannot be resolved (SPEC §12, §13): a 400, never retried. */
export const ReferenceFailure = {
  /** PC-6: depth beyond 3 or a cycle, `Failed to execute [<id>]: ...`. */
  Fatal: 'Render.ReferenceFatal',
  /** AG-10 at execution: a reference of an agent template no longer resolves. */
  Invalid: 'Render.ReferenceInvalid',
  /** PC-9, CH-2: `Unresolved variable(s): <names>`. */
  UnresolvedVariables: 'Render.UnresolvedVariables',
} as const;

type PromptExecutionKind = 'gateway' | 'reference' | 'chain_step';

/**
 * Input of the `promptExecution` workflow: a stored prompt (reference, chain step) or the
 * gateway's text, run with its own references (children) on its routed LLMs (PC-5, PC-9, CH-2).
 * Ids and parameters only. The record is created by the prepare activity if it does not exist.
 */
export interface PromptExecutionInput {
  executionId: string;
  kind: PromptExecutionKind;
  apiKeyId: string;
  parentExecutionId?: string;
  /** The stored prompt to run (reference, chain step); absent for the gateway (text in the request payload). */
  promptId?: string;
  /**
   * `execution_payloads` row holding {@link PromptRequestContent}: the gateway's text and
   * variables, or a chain step's variables and attachments. Absent for references.
   */
  requestPayloadId?: string;
  /** Depth of this prompt: its own references have depth + 1 (0 for the gateway and chain steps). */
  depth: number;
  /** Prompt ids above this one (cycle detection, PC-6). */
  ancestors: string[];
  /** LLMs to try in order when given (gateway with x-llm-id); else the prompt's routing. */
  llmIds?: string[];
  /** Used when the prompt has no routing and no llmIds were given: the parent's LLM, else the default. */
  fallbackLlmId?: string;
  temperature?: number;
  /** PC-5: the cache entry a reference's answer is stored under. */
  cacheKey?: string;
  /** Epoch ms of the clock for `{{foundationallm:current_datetime_utc}}`: the top execution's start; absent = this workflow's start. */
  nowMs?: number;
  chainId?: string;
  /** CH-5: chainExecutionId, chainStep, traceId, spanId (ids only). */
  metadata?: Record<string, unknown>;
  profiles: ExecutionProfiles;
}

export interface PromptExecutionResult extends ExecutionResult {
  /** This call's usage plus that of its EXECUTE reference children, recursively (CH-3, CH-4). */
  totalUsage?: Usage;
  llmId: string;
  provider: string;
  model: string;
  /** Gateway: the payload holding {executionChain, referenceErrors} (content). */
  chainPayloadId?: string;
}

/** The signature of the `promptExecution` workflow, for starting it by name as a child. */
export type PromptExecutionWorkflow = (input: PromptExecutionInput) => Promise<PromptExecutionResult>;

/** What the gateway and chain steps store as request content (encrypted). */
export interface PromptRequestContent {
  /** Gateway: the prompt text itself (`{{prompt:}}` references, `{{name}}` variables). */
  text?: string;
  /** Gateway: the prompt whose text this is (cycle detection and routing, PC-9). */
  sourcePromptId?: string;
  /** `{{name}}` runtime variable values. */
  variables: Record<string, string>;
  /** CH-2: appended to the user input as an `Attachments:` block; url ones also sent as input_file. */
  attachments?: ({ type: 'file'; fileId: string } | { type: 'url'; url: string })[];
}
