// What the OpenAI-compatible routes answer (issues 28, 34), for /openapi.json: the response object
// with every key the Open Responses specification requires (api/responses-objects.ts), the error
// body, a deletion, a list of input items and a compaction.

const nullable = <S extends object>(schema: S) => ({ anyOf: [schema, { type: 'null' }] }) as const;
const text = { type: 'string' } as const;
const nullableText = { type: ['string', 'null'] } as const;
const number = { type: 'number' } as const;

/** An item: a message, a function call, a reasoning or compaction item… (passed through as given). */
const itemSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', description: 'message, function_call, function_call_output, reasoning, …' },
    id: text,
    status: text,
    role: text,
    content: { anyOf: [text, { type: 'array', items: { type: 'object' } }] },
  },
} as const;

const usageSchema = {
  type: 'object',
  required: [
    'input_tokens',
    'output_tokens',
    'total_tokens',
    'input_tokens_details',
    'output_tokens_details',
  ],
  properties: {
    input_tokens: { type: 'integer' },
    output_tokens: { type: 'integer' },
    total_tokens: { type: 'integer' },
    input_tokens_details: { type: 'object', properties: { cached_tokens: { type: 'integer' } } },
    output_tokens_details: { type: 'object', properties: { reasoning_tokens: { type: 'integer' } } },
  },
} as const;

const RESPONSE_KEYS = [
  'id',
  'object',
  'created_at',
  'completed_at',
  'status',
  'incomplete_details',
  'model',
  'previous_response_id',
  'instructions',
  'output',
  'error',
  'tools',
  'tool_choice',
  'truncation',
  'parallel_tool_calls',
  'text',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'top_logprobs',
  'temperature',
  'reasoning',
  'user',
  'usage',
  'max_output_tokens',
  'max_tool_calls',
  'store',
  'background',
  'service_tier',
  'metadata',
  'safety_identifier',
  'prompt_cache_key',
];

/** The response object of an execution: the create's parameters echoed, the spec's values else. */
export const responseObjectSchema = {
  type: 'object',
  required: RESPONSE_KEYS,
  properties: {
    id: { type: 'string', description: 'The execution id (GET /executions/{id} reads the same one)' },
    object: { const: 'response' },
    created_at: { type: 'integer' },
    completed_at: { type: ['integer', 'null'] },
    status: { enum: ['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete'] },
    incomplete_details: nullable({ type: 'object', properties: { reason: text } }),
    model: { type: 'string', description: 'The LLM id' },
    previous_response_id: nullableText,
    instructions: nullableText,
    output: { type: 'array', items: itemSchema },
    output_text: { type: 'string', description: "The output messages' text (the SDKs' convenience)" },
    error: nullable({
      type: 'object',
      required: ['code', 'message'],
      properties: { code: text, message: text },
    }),
    tools: { type: 'array', items: { type: 'object' }, description: 'An agent: []' },
    tool_choice: { anyOf: [text, { type: 'object' }], description: 'An agent: "none"' },
    truncation: { enum: ['auto', 'disabled'] },
    parallel_tool_calls: { type: 'boolean' },
    text: { type: 'object', properties: { format: { type: 'object' } } },
    top_p: number,
    presence_penalty: number,
    frequency_penalty: number,
    top_logprobs: { type: 'integer' },
    temperature: number,
    reasoning: nullable({ type: 'object', properties: { effort: nullableText, summary: nullableText } }),
    user: nullableText,
    usage: nullable(usageSchema),
    max_output_tokens: { type: ['integer', 'null'] },
    max_tool_calls: { type: ['integer', 'null'] },
    store: { type: 'boolean' },
    background: { type: 'boolean' },
    service_tier: text,
    metadata: {
      type: 'object',
      description: "The client's own; an agent's: its pipeline's id and the trace's (trace_id)",
    },
    safety_identifier: nullableText,
    prompt_cache_key: nullableText,
    prompt: nullable({
      type: 'object',
      description: 'The agent that ran (null: the LLM answered directly)',
      properties: { id: text, version: text, variables: { type: 'null' } },
    }),
  },
} as const;

export const openAiErrorBodySchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'param', 'code'],
      properties: {
        message: text,
        type: text,
        param: nullableText,
        code: nullableText,
      },
    },
  },
} as const;

export const deletedResponseSchema = {
  type: 'object',
  required: ['id', 'object', 'deleted'],
  properties: { id: text, object: { const: 'response.deleted' }, deleted: { const: true } },
} as const;

export const inputItemListSchema = {
  type: 'object',
  required: ['object', 'data', 'first_id', 'last_id', 'has_more'],
  properties: {
    object: { const: 'list' },
    data: { type: 'array', items: itemSchema },
    first_id: nullableText,
    last_id: nullableText,
    has_more: { type: 'boolean' },
  },
} as const;

export const compactedResponseSchema = {
  type: 'object',
  required: ['id', 'object', 'output', 'created_at', 'usage'],
  properties: {
    id: text,
    object: { const: 'response.compaction' },
    output: { type: 'array', items: itemSchema, description: "The model server's compacted items, as given" },
    created_at: { type: 'integer' },
    usage: usageSchema,
  },
} as const;
