// The Responses API's response object (issue 28) for an agent execution: what POST /v1/responses,
// GET /v1/responses/{id}, the cancel and the streamed lifecycle events carry. Every field comes
// from the execution's ids (the record, or what the route just started), never from its content,
// so a live stream and a later replay of it carry the same objects.
import type { Response as OpenAiResponse, ResponseOutputMessage } from 'openai/resources/responses/responses';
import type { ExecutionRecord } from '../db/execution-store';
import type { IncompleteDetails, Usage } from '../domain/stream-events';

/** What a response object says of its execution besides its state. */
export interface ResponseView {
  /** The execution id: `GET /executions/{id}` reads the same execution. */
  id: string;
  /** Unix seconds of the execution's start (its UUIDv7 id's timestamp). */
  createdAt: number;
  /** The LLM's id. */
  model: string;
  agentId: string;
  agentVersion: number;
  pipelineId: string;
  traceId: string | null;
}

/** Unix seconds of a UUIDv7's timestamp: no read is needed to date an execution the same way twice. */
export const createdAtOf = (uuidV7: string): number =>
  Math.floor(parseInt(uuidV7.replace(/-/g, '').slice(0, 12), 16) / 1000);

export const viewOf = (r: ExecutionRecord): ResponseView => ({
  id: r.id,
  createdAt: createdAtOf(r.id),
  model: r.llm_id ?? '',
  agentId: r.agent_id ?? '',
  agentVersion: r.agent_version ?? 0,
  pipelineId: r.pipeline_id ?? '',
  traceId: r.trace_id,
});

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

export interface ResponseState {
  status: ResponseStatus;
  /** The answer's message, when there is one to show. */
  message?: ResponseOutputMessage;
  /** Why the model stopped short, for an incomplete response. */
  incompleteDetails?: IncompleteDetails;
  usage?: Usage | null;
  error?: { status: number; message: string } | null;
  /** Unix seconds, for a completed response. */
  completedAt?: number | null;
  /** Only the answer to a background create says so (the record does not keep the flag). */
  background?: boolean;
}

/** `msg_<execution id>_<n>`: the n-th message item a client was shown for this execution. */
export const itemIdOf = (view: ResponseView, n: number): string => `msg_${view.id}_${n}`;

export function messageItem(
  id: string,
  text: string,
  status: ResponseOutputMessage['status'],
): ResponseOutputMessage {
  return {
    id,
    type: 'message',
    status,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  };
}

/**
 * The status and message of a response whose answer is stored: completed, or incomplete (issue 33:
 * the model stopped at its output limit or a filter) with the text it gave and its reason.
 */
export function answeredState(
  view: ResponseView,
  answer: { text: string; incomplete_details?: IncompleteDetails },
): Pick<ResponseState, 'status' | 'message' | 'incompleteDetails'> {
  const incomplete = answer.incomplete_details;
  const status = incomplete ? 'incomplete' : 'completed';
  return {
    status,
    message: messageItem(itemIdOf(view, 1), answer.text, status),
    ...(incomplete ? { incompleteDetails: incomplete } : {}),
  };
}

/** Response.error's `code` is an enum of OpenAI's; ours map onto it (the message says the rest). */
function errorCodeOf(status: number): NonNullable<OpenAiResponse['error']>['code'] {
  if (status === 400) return 'invalid_prompt';
  if (status === 429) return 'rate_limit_exceeded';
  return 'server_error';
}

function usageOf(usage: Usage): NonNullable<OpenAiResponse['usage']> {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

export function responseObject(view: ResponseView, state: ResponseState): OpenAiResponse {
  const output = state.message ? [state.message] : [];
  const text = state.message?.content.map((c) => (c.type === 'output_text' ? c.text : '')).join('') ?? '';
  return {
    id: view.id,
    object: 'response',
    created_at: view.createdAt,
    status: state.status,
    ...(state.background !== undefined ? { background: state.background } : {}),
    completed_at: state.completedAt ?? null,
    error: state.error ? { code: errorCodeOf(state.error.status), message: state.error.message } : null,
    incomplete_details: state.incompleteDetails ?? null,
    instructions: null,
    // The pipeline (and the trace, when one was asked for) by id; the request's classification,
    // filters and variables are content and are not echoed.
    metadata: { pipeline: view.pipelineId, ...(view.traceId ? { trace_id: view.traceId } : {}) },
    model: view.model,
    output,
    output_text: text,
    parallel_tool_calls: false,
    prompt: { id: view.agentId, version: String(view.agentVersion), variables: null },
    store: true,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'none',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: state.usage ? usageOf(state.usage) : undefined,
  } as OpenAiResponse;
}
