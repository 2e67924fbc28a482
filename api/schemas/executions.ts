// The execution resource (SPEC §15 DX-1), for /openapi.json.

const nullableId = { type: ['string', 'null'] } as const;

export const executionSchema = {
  type: 'object',
  required: [
    'id',
    'kind',
    'status',
    'agent_id',
    'agent_version',
    'pipeline_id',
    'llm_id',
    'parent_execution_id',
    'trace_id',
    'attempts',
    'usage',
    'started_at',
    'finished_at',
  ],
  properties: {
    id: { type: 'string' },
    kind: { enum: ['agent', 'llm_query', 'gateway', 'chain', 'chain_step', 'reference'] },
    status: { enum: ['running', 'succeeded', 'failed', 'cancelled'] },
    agent_id: nullableId,
    agent_version: { type: ['integer', 'null'] },
    pipeline_id: nullableId,
    llm_id: nullableId,
    parent_execution_id: nullableId,
    trace_id: nullableId,
    attempts: { type: 'integer', description: 'Model call attempts so far' },
    usage: {
      type: ['object', 'null'],
      description: 'Token usage of a succeeded execution',
      properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' } },
    },
    started_at: { type: 'string', format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
    error: {
      type: 'object',
      description: 'Present when failed or cancelled (499)',
      properties: { status: { type: 'integer' }, type: { type: 'string' }, detail: { type: 'string' } },
    },
    answer: {
      type: 'string',
      description: 'The answer, while the content is retained (AGENTRY_CONTENT_RETENTION after the end)',
    },
    incomplete_details: {
      type: 'object',
      description:
        'Present with the answer when the model stopped before finishing it (its output limit, a content filter): the answer is the text it gave',
      properties: {
        reason: { type: 'string', description: "The provider's reason, e.g. max_output_tokens" },
      },
    },
  },
} as const;

export const EXECUTION_STREAM_QUERY = [
  { name: 'format', description: '`ndjson` (default) or `sse`; overrides Accept' },
  {
    name: 'after',
    description: 'Send only events with a greater seq (also the Last-Event-ID header; the larger wins)',
  },
];
