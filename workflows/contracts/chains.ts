// What the chain route, the chain activities and the `chainExecution` workflow agree on (SPEC §13).
// Imports nothing but types (of executions.ts and domain/), so the workflow sandbox can share it. History carries
// ids, orders, statuses, token counts and failure descriptions; every text (inputs, step
// variables, answers, the CH-3 report) lives encrypted in `execution_payloads`.
import type { ChainStepDefinition } from '../../domain/chain-run';
import type { ExecutionProfiles, ExecutionResult, Usage } from './executions';

export type { ChainStepDefinition };

export type ChainStatus = 'SUCCESS' | 'FAILED' | 'PARTIAL';
type ChainStepStatus = 'SUCCESS' | 'FAILED' | 'SKIPPED';

export const CHAIN_GUARDRAIL_MESSAGE = 'Chain guardrail violation';

export type ChainAttachment = { type: 'file'; fileId: string } | { type: 'url'; url: string };

/**
 * The chain execution's request payload: the request and a snapshot of the definition it runs,
 * so a run never sees a later edit and history never sees the texts.
 */
export interface ChainRequestContent {
  inputs: Record<string, string>;
  attachments: ChainAttachment[];
  /** In ascending order. */
  steps: ChainStepDefinition[];
  /** `metadata.stepAttachments` of the chain, by step order. */
  stepAttachments: Record<string, ChainAttachment[]>;
}

/** Input of the `chainExecution` workflow: ids and settings only. */
export interface ChainExecutionInput {
  executionId: string;
  chainId: string;
  apiKeyId: string;
  /** `execution_payloads` row holding {@link ChainRequestContent}. */
  requestPayloadId: string;
  /** In ascending order. */
  steps: { order: number; promptId: string }[];
  stopOnError: boolean;
  maxTokensPerExecution?: number;
  /** CH-5: the W3C trace id (32 hex) every step's traceparent carries. */
  traceId: string;
  profiles: ExecutionProfiles;
}

/** What the workflow knows of a step once it ended (no content). */
export interface ChainStepOutcome {
  order: number;
  promptId: string;
  status: ChainStepStatus;
  executionId?: string;
  answerPayloadId?: string;
  usage?: Usage;
  provider?: string;
  model?: string;
  /** The failure as a client sees it (`Unresolved variable(s): a`, `Model server failed: ...`). */
  error?: string;
  /** The HTTP status that failure maps to (400, 502, ...). */
  errorStatus?: number;
}

export interface PrepareChainStepInput {
  chainExecutionId: string;
  chainId: string;
  apiKeyId: string;
  chainRequestPayloadId: string;
  order: number;
  promptId: string;
  stepExecutionId: string;
  /** Succeeded steps so far: their answers feed the context through their output variables. */
  completed: { order: number; answerPayloadId: string }[];
  /** CH-5: chainExecutionId, chainStep, traceId, spanId, traceparent. */
  metadata: Record<string, unknown>;
}

export interface FinishChainInput {
  chainExecutionId: string;
  chainId: string;
  chainRequestPayloadId: string;
  steps: ChainStepOutcome[];
  status: ChainStatus;
  /** Set when a guardrail stopped the running chain (CH-4: the token ceiling). */
  guardrail?: 'maxTokens';
  elapsedMs: number;
}

/** The workflow's result: the CH-3 report is the chain execution's stored answer. */
export interface ChainExecutionResult extends ExecutionResult {
  status: ChainStatus;
  guardrail?: 'maxTokens';
}

/** The CH-3 response body. */
export interface ChainReport {
  chainId: string;
  chainExecutionId: string;
  status: ChainStatus;
  steps: {
    order: number;
    promptId: string;
    status: ChainStepStatus;
    providerName: string | null;
    providerModel: string | null;
    response: string | null;
    usage: { promptTokens: number; completionTokens: number };
    error?: string;
  }[];
  context: Record<string, string>;
  tokens: { promptTokens: number; completionTokens: number; totalTokens: number };
  errors: { order: number; promptId: string; error: string }[];
  elapsedMs: number;
}

/** The chain execution's stored answer: the report, and as text for DX-1/DX-2 readers. */
export interface StoredChainAnswer {
  text: string;
  usage: Usage;
  report: ChainReport;
}

/** Failure types a chain execution record carries when it ends failed. */
export const ChainFailure = {
  StepFailed: 'Chain.StepFailed',
  GuardrailViolation: 'Chain.GuardrailViolation',
} as const;
