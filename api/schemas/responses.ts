// The OpenAI-compatible routes' payloads (issue 28): the create request (validation and
// /openapi.json), the response object and the error body (/openapi.json).

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

/** POST /v1/responses: the Responses API's fields that mean something for an agent execution. */
export const createResponseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['prompt', 'model', 'metadata'],
  properties: {
    prompt: {
      type: 'object',
      additionalProperties: false,
      required: ['id'],
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
    },
    model: idOrName('The registered LLM: its id or name'),
    metadata: {
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
    },
    stream: { type: ['boolean', 'null'] },
    background: { type: ['boolean', 'null'] },
    store: {
      type: ['boolean', 'null'],
      description: 'true or omitted: every answer is stored for AGENTRY_CONTENT_RETENTION',
    },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
  },
} as const;

export interface CreateResponseBody {
  prompt: {
    id: string;
    version?: string | null;
    variables?: Record<string, string | { type: 'input_text'; text: string }> | null;
  };
  model: string;
  metadata: { pipeline: string; classification: string; filters?: string; tracing?: 'true' | 'false' };
  stream?: boolean | null;
  background?: boolean | null;
  store?: boolean | null;
  temperature?: number | null;
}

const nullable = (schema: object) => ({ anyOf: [schema, { type: 'null' }] });

const messageSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    type: { const: 'message' },
    status: { enum: ['in_progress', 'completed', 'incomplete'] },
    role: { const: 'assistant' },
    content: {
      type: 'array',
      items: { type: 'object', properties: { type: { const: 'output_text' }, text: { type: 'string' } } },
    },
  },
} as const;

/** The response object of an agent execution (api/responses-objects.ts), for /openapi.json. */
export const responseObjectSchema = {
  type: 'object',
  required: ['id', 'object', 'created_at', 'status', 'model', 'output', 'output_text', 'error'],
  properties: {
    id: { type: 'string', description: 'The execution id (GET /executions/{id} reads the same one)' },
    object: { const: 'response' },
    created_at: { type: 'integer' },
    status: { enum: ['queued', 'in_progress', 'completed', 'incomplete', 'failed', 'cancelled'] },
    incomplete_details: nullable({
      type: 'object',
      description:
        'Why the model stopped before finishing (status incomplete): its output is the text it gave',
      properties: { reason: { type: 'string' } },
    }),
    background: { type: 'boolean', description: 'Only in the answer to a background create' },
    completed_at: { type: ['integer', 'null'] },
    model: { type: 'string', description: 'The LLM id' },
    prompt: {
      type: 'object',
      properties: { id: { type: 'string' }, version: { type: 'string' }, variables: { type: 'null' } },
    },
    metadata: {
      type: 'object',
      properties: { pipeline: { type: 'string' }, trace_id: { type: 'string' } },
    },
    output: { type: 'array', items: messageSchema },
    output_text: { type: 'string' },
    error: nullable({
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    }),
    usage: {
      type: 'object',
      properties: {
        input_tokens: { type: 'integer' },
        output_tokens: { type: 'integer' },
        total_tokens: { type: 'integer' },
      },
    },
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
        message: { type: 'string' },
        type: { type: 'string' },
        param: { type: ['string', 'null'] },
        code: { type: ['string', 'null'] },
      },
    },
  },
} as const;

export const RETRIEVE_RESPONSE_QUERY = [
  { name: 'stream', description: "`true`: the response's events (server-sent events), from the start" },
  {
    name: 'starting_after',
    description: 'With stream=true: only events whose sequence_number is greater (also Last-Event-ID)',
  },
];

export const RESPONSES_IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  description:
    '1–255 visible ASCII characters. A repeat within 24 h with the same body attaches to the same ' +
    'execution (Idempotent-Replayed: true), never a second model call; a different body with the same key → 409.',
};
