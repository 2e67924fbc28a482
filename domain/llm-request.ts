// LLM-2: how chat messages become a Responses API request; LLM-1: the provider label.

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
