// An execution's model request and answer as they are stored (encrypted, in `execution_payloads`):
// what the model activity writes and reads, and what the API, chains and prompt plans read back.
// The answer's payload id derives from the execution's id, so a retried attempt writes the same row.
import { v5 as uuidv5 } from 'uuid';
import type { ChatMessage, ResponsesModelRequest } from '../domain/llm-request';
import type { ResponseItem } from '../domain/response-items';
import type { IncompleteDetails } from '../domain/stream-events';
import type { Usage } from '../workflows/contracts';

export type { ResponsesModelRequest };

/** The stored answer of an execution. */
export interface StoredAnswer {
  text: string;
  usage: Usage;
  /**
   * The provider's output items as it returned them, for the model call that keeps them (issue
   * 34); absent, the answer is one assistant message of `text`.
   */
  output?: ResponseItem[];
  /** The model stopped short (its output limit, a content filter): the text is what it gave. */
  incomplete_details?: IncompleteDetails;
}

/**
 * Stored request content of a direct query or a rendered agent prompt; of a plain /v1/responses
 * request also the whole request (`responses`), which `messages` flattens (`chatMessagesOf`) for
 * the model call that takes messages only, until it sends `toProviderRequest(content)`.
 */
export interface ModelRequestContent {
  messages: ChatMessage[];
  responses?: ResponsesModelRequest;
}

const ANSWER_NAMESPACE = '6f1f3c52-8a7e-4b8e-9d55-2f2b7f0c9a11';
export const answerPayloadId = (executionId: string): string =>
  uuidv5(`${executionId}:answer`, ANSWER_NAMESPACE);
