// Conversations of /v1/responses (SPEC OR-3): a response's items are its stored request's (the
// context its `previous_response_id` brought and its own input) followed by its answer's output,
// all in the execution's encrypted payloads, so a conversation lives as long as its last turn's
// content (docs/decisions.md, "Conversations"). Only the key that made a response continues it.
import type { ExecutionContent, ExecutionRecord } from '../db/execution-store';
import { InvalidInput } from '../domain/errors';
import type { ChatMessage } from '../domain/llm-request';
import type { Principal } from '../domain/permissions';
import type { ResponseItem } from '../domain/response-items';
import { isUuid } from '../infra/ids';
import type { ModelRequestContent, StoredAnswer } from '../services/answers';
import type { AgentRequestContent } from '../services/retrieval';
import { itemIdOf, messageItem } from './responses-objects';

/** A response's stored request: a plain create's, a direct query's, or an agent's. */
export type StoredRequest = Partial<ModelRequestContent> & Partial<AgentRequestContent>;

export type StoredResponse = ExecutionContent<StoredRequest, StoredAnswer>;

/** The executions that are responses: an agent's, and a direct query's (plain creates are ones). */
export const isResponse = (record: ExecutionRecord): boolean =>
  record.kind === 'agent' || record.kind === 'llm_query';

/** A direct query's messages (POST /llms/{id}/query) as the input items they were. */
const messageItems = (executionId: string, messages: readonly ChatMessage[]): ResponseItem[] =>
  messages.map((m, i) => ({
    type: 'message',
    id: `msg_${executionId}_i${i}`,
    role: m.role,
    content: m.content,
  }));

/** What the model was given: the context and the input items, in order. */
export function inputOf({ record, request }: StoredResponse): ResponseItem[] {
  const turns = request?.responses;
  if (turns) return [...turns.context, ...turns.input];
  return request?.messages ? messageItems(record.id, request.messages) : [];
}

/** What the model answered: its items, or the one message of its text. */
export function outputOf({ record, answer }: StoredResponse): ResponseItem[] {
  if (!answer) return [];
  if (answer.output) return answer.output;
  return [messageItem(itemIdOf(record, 1), answer.text, 'completed') as unknown as ResponseItem];
}

function notFound(id: string): InvalidInput {
  const message = `Previous response with id '${id}' not found.`;
  return new InvalidInput(message, [
    { type: 'previous_response_not_found', path: 'previous_response_id', message },
  ]);
}

/**
 * The items `previous_response_id` continues (its input, then its output). Not found, as for an
 * unknown id, unless it is this key's (an admin's key too: another key's response is never read),
 * stored (`store` not false), not deleted and its content retained. A failed or cancelled response
 * continues from its input; a running one is a 400 of its own.
 */
export async function contextOf(
  deps: { executions: { content<R, A>(id: string): Promise<ExecutionContent<R, A> | null> } },
  principal: Principal,
  id: string,
): Promise<ResponseItem[]> {
  const stored = isUuid(id)
    ? await deps.executions.content<StoredRequest, StoredAnswer>(id.toLowerCase())
    : null;
  const record = stored?.record;
  if (!stored || !record || !isResponse(record) || record.api_key_id !== principal.keyId) throw notFound(id);
  if (!record.store || record.deleted_at !== null || !stored.request) throw notFound(id);
  if (!stored.answer && record.status === 'running') {
    const message = `Previous response with id '${id}' is still in progress.`;
    throw new InvalidInput(message, [
      { type: 'previous_response_in_progress', path: 'previous_response_id', message },
    ]);
  }
  // A succeeded response whose answer expired has lost its last turn: it cannot be continued.
  if (!stored.answer && record.status === 'succeeded') throw notFound(id);
  return [...inputOf(stored), ...outputOf(stored)];
}
