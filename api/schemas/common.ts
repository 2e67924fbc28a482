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
