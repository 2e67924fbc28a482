// LLM-2: how chat messages become a Responses API request; OR-1: how a /v1/responses request
// reaches the model as given (`toProviderRequest`); LLM-1: the provider label.
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import { contentOf, forProvider, type ResponseItem } from './response-items';

type ChatRole = 'system' | 'user' | 'assistant' | 'developer';

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /** URLs sent along as `input_file` items (CH-2 url attachments). */
  fileUrls?: string[];
}

type InputContent =
  string | ({ type: 'input_text'; text: string } | { type: 'input_file'; file_url: string })[];

interface ResponsesRequest {
  instructions?: string;
  input: { role: Exclude<ChatRole, 'system'>; content: InputContent }[];
  temperature?: number;
}

/** System messages, in order, joined with a blank line become `instructions`; the rest are `input` items. */
export function toResponsesRequest(messages: readonly ChatMessage[], temperature?: number): ResponsesRequest {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
  const input = messages
    .filter((m): m is ChatMessage & { role: Exclude<ChatRole, 'system'> } => m.role !== 'system')
    .map((m) => ({
      role: m.role,
      content:
        m.fileUrls && m.fileUrls.length > 0
          ? [
              { type: 'input_text' as const, text: m.content },
              ...m.fileUrls.map((url) => ({ type: 'input_file' as const, file_url: url })),
            ]
          : m.content,
    }));
  return {
    ...(system.length > 0 ? { instructions: system.join('\n\n') } : {}),
    input,
    ...(temperature !== undefined ? { temperature } : {}),
  };
}

/**
 * A plain /v1/responses request as its execution stores it (encrypted): the conversation before it
 * (`context`: a `previous_response_id`'s input and output items, in order), its own `input` items
 * and every model parameter as the client gave it (nulls dropped). The API expands
 * `previous_response_id` itself: the provider never sees it, nor `metadata`, `store`, `background`.
 */
export interface ResponsesModelRequest {
  context: ResponseItem[];
  input: ResponseItem[];
  instructions?: string;
  tools?: Record<string, unknown>[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  text?: { format?: Record<string, unknown>; verbosity?: string };
  reasoning?: { effort?: string | null; summary?: string | null; [field: string]: unknown };
  max_output_tokens?: number;
  max_tool_calls?: number;
  temperature?: number;
  top_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  top_logprobs?: number;
  truncation?: 'auto' | 'disabled';
  include?: string[];
  user?: string;
  safety_identifier?: string;
  prompt_cache_key?: string;
  prompt_cache_retention?: string;
  prompt_cache_options?: Record<string, unknown>;
  service_tier?: string;
  context_management?: Record<string, unknown>[];
  moderation?: Record<string, unknown>;
  metadata?: Record<string, string>;
  store: boolean;
  background: boolean;
  previous_response_id?: string;
}

/** What reaches the provider as given: everything but the items and Agentry's own fields. */
export const MODEL_PARAMETERS = [
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'reasoning',
  'max_output_tokens',
  'max_tool_calls',
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'top_logprobs',
  'truncation',
  'include',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'service_tier',
  'context_management',
  'moderation',
] as const satisfies readonly (keyof ResponsesModelRequest)[];

/** A provider request without `model`, `stream`, `store` and `background`, which the model call sets. */
export type ProviderRequest = Omit<ResponseCreateParamsBase, 'model' | 'stream' | 'store' | 'background'>;

/**
 * The model request of an execution's stored content (OR-1): a /v1/responses request (`responses`)
 * goes to the provider as given, its context and input items in order (Agentry's own item ids
 * dropped); chat messages (a direct query, a rendered agent prompt) map as LLM-2 says.
 */
export function toProviderRequest(
  content: { messages: readonly ChatMessage[]; responses?: ResponsesModelRequest | undefined },
  temperature?: number,
): ProviderRequest {
  const request = content.responses;
  if (!request) return toResponsesRequest(content.messages, temperature) as ProviderRequest;
  const given = MODEL_PARAMETERS.filter((field) => request[field] !== undefined);
  return {
    ...Object.fromEntries(given.map((field) => [field, request[field]])),
    input: [...request.context, ...request.input].map(forProvider),
  } as ProviderRequest;
}

/**
 * Items as chat messages (LLM-2's input), for the model call that takes messages only: the
 * messages' text and file URLs in order, `instructions` first as a system message. Lossy by
 * design (images, tool calls and other items are left out); `toProviderRequest` is the lossless way.
 */
export function chatMessagesOf(items: readonly ResponseItem[], instructions?: string): ChatMessage[] {
  const messages: ChatMessage[] =
    instructions !== undefined ? [{ role: 'system', content: instructions }] : [];
  for (const item of items) {
    if (item.type !== 'message' || !CHAT_ROLES.includes(item.role as ChatRole)) continue;
    const { text, fileUrls } = contentOf(item.content);
    messages.push({
      role: item.role as ChatRole,
      content: text,
      ...(fileUrls.length > 0 ? { fileUrls } : {}),
    });
  }
  return messages;
}

const CHAT_ROLES: readonly ChatRole[] = ['system', 'user', 'assistant', 'developer'];

/** `openai`, `anthropic`, `azure` from the endpoint's host, else `custom`. */
export function providerFromEndpoint(endpoint: string): string {
  let host: string;
  try {
    host = new URL(endpoint).hostname.toLowerCase();
  } catch {
    return 'custom';
  }
  const is = (domain: string): boolean => host === domain || host.endsWith(`.${domain}`);
  if (is('openai.com')) return 'openai';
  if (is('anthropic.com')) return 'anthropic';
  if (is('azure.com') || is('azure-api.net') || is('openai.azure.com')) return 'azure';
  return 'custom';
}
