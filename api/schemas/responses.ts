// The OpenAI-compatible routes' requests (issues 28, 34): the create, the GET's JSON body and query,
// the compaction (validation and /openapi.json); what they answer is in ./response-objects.ts.
import type { InputBody } from '../../domain/response-items';
import {
  inputSchema,
  reasoningSchema,
  textConfigSchema,
  toolChoiceSchema,
  toolSchema,
} from './response-items';

const nullable = <S extends object>(schema: S) => ({ anyOf: [schema, { type: 'null' }] }) as const;

const idOrName = (what: string) =>
  ({ type: 'string', minLength: 1, maxLength: 200, description: what }) as const;

const variableSchema = {
  anyOf: [
    { type: 'string' },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'text'],
      properties: { type: { const: 'input_text' }, text: { type: 'string' } },
    },
  ],
} as const;

const agentPromptSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['id'],
  description: 'An agent to run (omitted: the LLM `model` names answers the input directly)',
  properties: {
    id: idOrName('The agent: its id or name'),
    version: {
      type: ['string', 'null'],
      pattern: '^[1-9][0-9]{0,8}$',
      description: 'an agent version number such as "2" (omitted or null: the current version)',
    },
    variables: {
      type: ['object', 'null'],
      description: 'The query placeholders\' values: strings, or {"type": "input_text", "text"}',
      additionalProperties: variableSchema,
    },
  },
} as const;

/** An agent request's `metadata`: the pipeline and classification it runs on (checked with `prompt`). */
const agentMetadataSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['pipeline', 'classification'],
  properties: {
    pipeline: idOrName('The pipeline: its id or name'),
    classification: {
      type: 'string',
      minLength: 1,
      description:
        'The reader classification (CL-2): a level name, or the JSON text of any CL-2 form ' +
        '(\'["internal","hr"]\', \'{"name":"internal","exact":true}\')',
    },
    filters: {
      type: 'string',
      description: "The JSON text of the execute route's `filters` object (placeholder → filter)",
    },
    tracing: { enum: ['true', 'false'], description: '"true": store the trace (EX-5)' },
  },
} as const;

/** A plain request's `metadata`: the client's own (echoed, never sent to the model). */
const plainMetadataSchema = {
  type: 'object',
  maxProperties: 16,
  propertyNames: { maxLength: 64 },
  additionalProperties: { type: 'string', maxLength: 512 },
} as const;

/** With `prompt`: its own fields and `metadata`, checked after the top level (api/responses-create.ts). */
export const agentRequestSchema = {
  type: 'object',
  required: ['prompt', 'metadata'],
  properties: { prompt: { type: 'object' }, metadata: agentMetadataSchema },
} as const;

/** Without `prompt`: the client's `metadata`. */
export const plainRequestSchema = {
  type: 'object',
  properties: { metadata: nullable(plainMetadataSchema) },
} as const;

const nullableNumber = (minimum: number, maximum: number) =>
  ({ type: ['number', 'null'], minimum, maximum }) as const;
const nullableInteger = (minimum: number, maximum?: number) =>
  ({ type: ['integer', 'null'], minimum, ...(maximum !== undefined ? { maximum } : {}) }) as const;
const nullableText = { type: ['string', 'null'] } as const;

/**
 * POST /v1/responses: every field of the Open Responses specification's createResponseBody and of
 * openai-node 6.49's ResponseCreateParams (strict at the top level, SPEC §1). With `prompt` an agent
 * runs (`metadata` names its pipeline); without, the LLM `model` names answers `input` directly.
 */
export const createResponseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model'],
  properties: {
    model: idOrName('The registered LLM: its id or name'),
    input: inputSchema,
    instructions: nullableText,
    previous_response_id: { type: ['string', 'null'], description: 'Continue this stored response' },
    prompt: agentPromptSchema,
    metadata: {
      type: ['object', 'null'],
      description:
        'With `prompt`: pipeline, classification, filters?, tracing?. Without: up to 16 strings of ' +
        'your own, echoed and never sent to the model',
    },
    include: { type: ['array', 'null'], items: { type: 'string' } },
    tools: { type: ['array', 'null'], items: toolSchema },
    tool_choice: nullable(toolChoiceSchema),
    parallel_tool_calls: { type: ['boolean', 'null'] },
    text: nullable(textConfigSchema),
    reasoning: nullable(reasoningSchema),
    max_output_tokens: nullableInteger(1),
    max_tool_calls: nullableInteger(1),
    temperature: nullableNumber(0, 2),
    top_p: nullableNumber(0, 1),
    presence_penalty: nullableNumber(-2, 2),
    frequency_penalty: nullableNumber(-2, 2),
    top_logprobs: nullableInteger(0, 20),
    truncation: { enum: ['auto', 'disabled', null] },
    service_tier: { enum: ['auto', 'default', 'flex', 'scale', 'priority', null] },
    store: {
      type: ['boolean', 'null'],
      description:
        'false: the response cannot be read or continued once it finished, and its content is deleted then',
    },
    stream: { type: ['boolean', 'null'] },
    stream_options: nullable({ type: 'object', properties: { include_obfuscation: { type: 'boolean' } } }),
    background: { type: ['boolean', 'null'] },
    safety_identifier: { type: ['string', 'null'], maxLength: 64 },
    prompt_cache_key: nullableText,
    prompt_cache_retention: { enum: ['in_memory', '24h', null] },
    prompt_cache_options: nullable({ type: 'object' }),
    user: nullableText,
    context_management: { type: ['array', 'null'], items: { type: 'object' } },
    moderation: nullable({ type: 'object' }),
    conversation: {
      description: 'Not supported (400): continue a response with previous_response_id',
    },
  },
} as const;

type Nullable<T> = T | null | undefined;

/** A create as the schema lets it through. */
export interface ResponsesCreateBody {
  model: string;
  input?: InputBody;
  instructions?: Nullable<string>;
  previous_response_id?: Nullable<string>;
  prompt?: Nullable<AgentPrompt>;
  metadata?: Nullable<Record<string, string>>;
  stream?: Nullable<boolean>;
  background?: Nullable<boolean>;
  store?: Nullable<boolean>;
  temperature?: Nullable<number>;
  conversation?: unknown;
  [parameter: string]: unknown;
}

interface AgentPrompt {
  id: string;
  version?: string | null;
  variables?: Record<string, string | { type: 'input_text'; text: string }> | null;
}

/** A create with `prompt`: an agent's execution. */
export interface CreateResponseBody extends ResponsesCreateBody {
  prompt: AgentPrompt;
  metadata: { pipeline: string; classification: string; filters?: string; tracing?: 'true' | 'false' };
}

/** POST /v1/responses/compact: openai-node 6.49's ResponseCompactParams. */
export const compactRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model'],
  properties: {
    model: idOrName('The registered LLM: its id or name'),
    input: nullable(inputSchema),
    previous_response_id: { type: ['string', 'null'], description: 'Compact this stored response too' },
    instructions: nullableText,
    prompt_cache_key: nullableText,
    prompt_cache_retention: { enum: ['in_memory', '24h', null] },
    prompt_cache_options: nullable({ type: 'object' }),
    service_tier: { enum: ['auto', 'default', 'flex', 'scale', 'priority', null] },
  },
} as const;

export interface CompactRequestBody {
  model: string;
  input?: InputBody | null;
  previous_response_id?: string | null;
  [parameter: string]: unknown;
}

/** GET /v1/responses/{id}'s JSON body (the Go SDK's `GetStreaming` sends `{"stream": true}`). */
export const retrieveBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    stream: { type: ['boolean', 'null'] },
    starting_after: { type: ['integer', 'null'], minimum: 0 },
    include: { type: ['array', 'null'], items: { type: 'string' } },
    include_obfuscation: { type: ['boolean', 'null'] },
  },
} as const;

export interface RetrieveBody {
  stream?: boolean | null;
  starting_after?: number | null;
}

export const RETRIEVE_RESPONSE_QUERY = [
  { name: 'stream', description: "`true`: the response's events (server-sent events), from the start" },
  {
    name: 'starting_after',
    description: 'With stream=true: only events whose sequence_number is greater (also Last-Event-ID)',
  },
  { name: 'include', description: 'Accepted; the output carries what the model returned' },
  { name: 'include_obfuscation', description: 'Accepted; events carry no obfuscation' },
];

export const INPUT_ITEMS_QUERY = [
  { name: 'after', description: 'An item id: the items after it in the order asked' },
  { name: 'limit', description: '1–100 items (default 20)' },
  { name: 'order', description: '`desc` (default: the last item first) or `asc`' },
  { name: 'include', description: 'Accepted; items are as they were given' },
];

export const RESPONSES_IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  description:
    '1–255 visible ASCII characters. A repeat within 24 h with the same body attaches to the same ' +
    'execution (Idempotent-Replayed: true), never a second model call; a different body with the same key → 409.',
};
