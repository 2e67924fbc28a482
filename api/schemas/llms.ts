// LLM registry and direct query payloads (SPEC §7, §9.1 `stream`).
import { descriptionSchema, nameSchema, upstreamApiKeySchema } from './common';

const endpointSchema = { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2000 } as const;
const modelSchema = { type: 'string', minLength: 1, maxLength: 200 } as const;

const llmProperties = {
  name: nameSchema,
  description: descriptionSchema,
  endpoint: endpointSchema,
  model: modelSchema,
  api_key: upstreamApiKeySchema,
  resumable: {
    type: 'boolean',
    description:
      'Resumable mode (default false): each model call is a background response (Responses API ' +
      '`background: true`) that a retried attempt resumes after the last relayed event instead of ' +
      'asking the model again. The provider stores a background response for a while (OpenAI: about ' +
      '10 minutes), which some data-retention agreements (ZDR) forbid.',
  },
} as const;

export const createLlmSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'endpoint', 'model', 'api_key'],
  properties: llmProperties,
} as const;

export interface CreateLlmBody {
  name: string;
  description?: string | null;
  endpoint: string;
  model: string;
  api_key: string;
  resumable?: boolean;
}

export const updateLlmSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: llmProperties,
} as const;

export type UpdateLlmBody = Partial<CreateLlmBody>;

export const llmSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    endpoint: { type: 'string' },
    model: { type: 'string' },
    provider: { type: 'string', enum: ['openai', 'anthropic', 'azure', 'custom'] },
    resumable: { type: 'boolean' },
    has_api_key: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** `stream`: omitted, true or "ndjson" → NDJSON; "sse" → server-sent events; false → plain text. */
export const streamSchema = { enum: [true, false, 'ndjson', 'sse'] } as const;
export type StreamOption = true | false | 'ndjson' | 'sse';

export const llmQuerySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['messages'],
  properties: {
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['role', 'content'],
        properties: {
          role: { enum: ['system', 'developer', 'user', 'assistant'] },
          content: { type: 'string', maxLength: 2_000_000 },
        },
      },
    },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    stream: streamSchema,
  },
} as const;

export interface LlmQueryBody {
  messages: { role: 'system' | 'developer' | 'user' | 'assistant'; content: string }[];
  temperature?: number;
  stream?: StreamOption;
}
