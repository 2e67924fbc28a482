// The Responses API's response object (issues 28, 34) of an execution: what POST /v1/responses,
// GET /v1/responses/{id}, the cancel and the streamed lifecycle events carry, with every key the
// Open Responses specification requires (OR-6). Every field comes from the execution's ids and the
// parameters its create stored (the echo), never from the provider's answer, so a live stream and a
// later replay of it carry the same objects; what Agentry does not use has the specification's value.
import type { Response as OpenAiResponse, ResponseOutputMessage } from 'openai/resources/responses/responses';
import type { ExecutionRecord } from '../db/execution-store';
import type { ResponsesModelRequest } from '../domain/llm-request';
import type { IncompleteDetails, Usage } from '../domain/stream-events';

/** The create's parameters a response object repeats (from the stored request on a GET). */
export type ResponseEcho = Partial<Omit<ResponsesModelRequest, 'context' | 'input'>>;

/** What a response object says of its execution besides its state. */
export interface ResponseView {
  /** The execution id: `GET /executions/{id}` reads the same execution. */
  id: string;
  /** Unix seconds of the execution's start (its UUIDv7 id's timestamp). */
  createdAt: number;
  /** The LLM's id. */
  model: string;
  /** An agent's response: the agent, its version and the pipeline; null for a plain one. */
  agentId: string | null;
  agentVersion: number | null;
  pipelineId: string | null;
  traceId: string | null;
  /** Absent: the specification's defaults (an execution started by another route). */
  echo?: ResponseEcho;
}

/** The echo of a stored request: its parameters without its items. */
export function echoOf(request: Partial<ResponsesModelRequest> | undefined): ResponseEcho {
  if (!request) return {};
  const { context: _context, input: _input, ...echo } = request;
  return echo;
}

/** Unix seconds of a UUIDv7's timestamp: no read is needed to date an execution the same way twice. */
export const createdAtOf = (uuidV7: string): number =>
  Math.floor(parseInt(uuidV7.replace(/-/g, '').slice(0, 12), 16) / 1000);

export const viewOf = (r: ExecutionRecord, echo: ResponseEcho = {}): ResponseView => ({
  id: r.id,
  createdAt: createdAtOf(r.id),
  model: r.llm_id ?? '',
  agentId: r.agent_id,
  agentVersion: r.agent_version,
  pipelineId: r.pipeline_id,
  traceId: r.trace_id,
  echo,
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
}

/** `msg_<execution id>_<n>`: the n-th message item a client was shown for this execution. */
export const itemIdOf = (view: Pick<ResponseView, 'id'>, n: number): string => `msg_${view.id}_${n}`;

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

export function usageOf(usage: Usage): NonNullable<OpenAiResponse['usage']> {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

/** The specification's FunctionTool: every key, null where the request said nothing. */
function toolOf(tool: Record<string, unknown>): Record<string, unknown> {
  if (tool.type !== 'function') return tool;
  const { description = null, parameters = null, strict = null } = tool;
  return { ...tool, description, parameters, strict };
}

/** The parameters an agent's response says: its definition decides them, not the request. */
const AGENT_PARAMETERS = { tools: [], tool_choice: 'none', parallel_tool_calls: false };

/** What the request set, or what the specification says a response that did not use it carries. */
function parametersOf(view: ResponseView) {
  const e = view.echo ?? {};
  return {
    background: e.background ?? false,
    frequency_penalty: e.frequency_penalty ?? 0,
    instructions: e.instructions ?? null,
    max_output_tokens: e.max_output_tokens ?? null,
    max_tool_calls: e.max_tool_calls ?? null,
    parallel_tool_calls: e.parallel_tool_calls ?? true,
    presence_penalty: e.presence_penalty ?? 0,
    previous_response_id: e.previous_response_id ?? null,
    prompt_cache_key: e.prompt_cache_key ?? null,
    reasoning: { effort: e.reasoning?.effort ?? null, summary: e.reasoning?.summary ?? null },
    safety_identifier: e.safety_identifier ?? null,
    service_tier: e.service_tier ?? 'default',
    store: e.store ?? true,
    temperature: e.temperature ?? 1,
    text: { ...e.text, format: e.text?.format ?? { type: 'text' } },
    tool_choice: e.tool_choice ?? 'auto',
    tools: (e.tools ?? []).map(toolOf),
    top_logprobs: e.top_logprobs ?? 0,
    top_p: e.top_p ?? 1,
    truncation: e.truncation ?? 'disabled',
    user: e.user ?? null,
  };
}

/**
 * An agent's ids in `prompt` and `metadata` (the pipeline, the trace when one was asked for): its
 * classification, filters and variables are content and are not echoed. A plain response's
 * `metadata` is the client's own.
 */
function agentOrPlain(view: ResponseView) {
  if (view.agentId === null) return { prompt: null, metadata: view.echo?.metadata ?? {} };
  return {
    ...AGENT_PARAMETERS,
    prompt: { id: view.agentId, version: String(view.agentVersion), variables: null },
    metadata: { pipeline: view.pipelineId, ...(view.traceId ? { trace_id: view.traceId } : {}) },
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
    completed_at: state.completedAt ?? null,
    error: state.error ? { code: errorCodeOf(state.error.status), message: state.error.message } : null,
    incomplete_details: state.incompleteDetails ?? null,
    model: view.model,
    output,
    output_text: text,
    usage: state.usage ? usageOf(state.usage) : null,
    ...parametersOf(view),
    ...agentOrPlain(view),
    // The echo holds what the client sent, item and tool types this package may not know included.
  } as unknown as OpenAiResponse;
}
