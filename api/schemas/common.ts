// Shapes shared by many operations: the error body, the list envelope, timestamps.

export const errorBodySchema = {
  type: 'object',
  required: ['detail'],
  properties: {
    detail: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'message'],
        properties: { type: { type: 'string' }, path: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
} as const;

export function listEnvelopeSchema(item: object) {
  return {
    type: 'object',
    required: ['data', 'page_info', 'query_info'],
    properties: {
      data: { type: 'array', items: item },
      page_info: {
        type: 'object',
        properties: {
          after: { type: ['string', 'null'] },
          before: { type: ['string', 'null'] },
          count: { type: 'integer' },
          has_next: { type: 'boolean' },
          has_prev: { type: 'boolean' },
        },
      },
      query_info: { type: 'array', items: { type: 'object' } },
    },
  } as const;
}

export const LIST_QUERY = [
  { name: 'limit', description: 'Page size, 1–100 (default 20)' },
  { name: 'after', description: 'Cursor: the page after this item (page_info.after)' },
  { name: 'before', description: 'Cursor: the page before this item (page_info.before)' },
  { name: 'order', description: 'Comma-separated fields, `-field` for descending (default created_at)' },
  {
    name: '<field>[$op]',
    description:
      'Filter: equality, or $contains, $startswith, $ne, $gt, $gte, $lt, $lte, $in (comma-separated)',
  },
];

export const nameSchema = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;
export const descriptionSchema = { type: ['string', 'null'], maxLength: 2000 } as const;

/**
 * An API key of an upstream server (LLM, embedding endpoint). It travels as an HTTP header
 * (`Authorization: Bearer <key>`), so only printable ASCII can ever be sent: anything else would
 * be stored and then fail every call (502), so it is a 400 at registration.
 */
export const upstreamApiKeySchema = {
  type: 'string',
  minLength: 1,
  maxLength: 4000,
  pattern: '^[\\x21-\\x7e](?:[\\x20-\\x7e]*[\\x21-\\x7e])?$',
  description: 'printable ASCII without leading or trailing spaces',
} as const;
