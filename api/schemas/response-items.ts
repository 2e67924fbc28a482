// The items and tools of a /v1/responses request (issue 34), validated loosely: the item types
// Agentry reads (messages, function calls and their outputs, references, compaction) get their
// required fields checked, other types and extra keys inside items pass to the model as given
// (the SDKs feed back output items with `id`, `status`, `annotations`, `created_by`…).

const text = { type: 'string' } as const;
const nullable = <S extends object>(schema: S) => ({ anyOf: [schema, { type: 'null' }] }) as const;

/** Applies `then` to an object whose `type` is `type` (a required `type`, unlike a message's). */
const whenType = <T extends string, S extends object>(type: T, then: S) =>
  ({ if: { required: ['type'], properties: { type: { const: type } } }, then }) as const;

const contentPartSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', description: 'input_text, input_image, input_file, output_text, refusal' },
  },
  allOf: [
    whenType('input_text', { required: ['text'], properties: { text } }),
    whenType('output_text', { required: ['text'], properties: { text } }),
    whenType('refusal', { required: ['refusal'], properties: { refusal: text } }),
    whenType('input_image', {
      properties: {
        image_url: nullable(text),
        file_id: nullable(text),
        detail: { enum: ['low', 'high', 'auto', 'original', null] },
      },
    }),
    whenType('input_file', {
      properties: { file_data: text, file_id: nullable(text), file_url: text, filename: text },
    }),
  ],
} as const;

/** A message: `type: "message"`, or no `type` and a `role`. */
const messageSchema = {
  required: ['role', 'content'],
  properties: {
    role: { enum: ['system', 'developer', 'user', 'assistant'] },
    content: { anyOf: [text, { type: 'array', items: contentPartSchema }] },
    phase: { enum: ['commentary', 'final_answer', null] },
    status: nullable(text),
  },
} as const;

export const inputItemSchema = {
  type: 'object',
  properties: {
    type: { type: 'string', description: 'message (the default with a role), function_call, …' },
    id: nullable(text),
  },
  allOf: [
    { if: { properties: { type: { const: 'message' } } }, then: messageSchema },
    whenType('function_call', {
      required: ['call_id', 'name', 'arguments'],
      properties: { call_id: text, name: text, arguments: text },
    }),
    whenType('function_call_output', {
      required: ['call_id', 'output'],
      properties: { call_id: text, output: { anyOf: [text, { type: 'array' }] } },
    }),
    whenType('item_reference', { required: ['id'], properties: { id: text } }),
    whenType('compaction', { required: ['encrypted_content'], properties: { encrypted_content: text } }),
    whenType('reasoning', {
      properties: { summary: { type: 'array' }, encrypted_content: nullable(text) },
    }),
  ],
} as const;

export const inputSchema = {
  anyOf: [
    { type: 'string', description: 'One user message' },
    { type: 'array', items: inputItemSchema, description: 'Items: messages, function call outputs, …' },
  ],
} as const;

const functionName = {
  type: 'string',
  pattern: '^[a-zA-Z0-9_-]{1,128}$',
  description: 'a-z, A-Z, 0-9, _ and -',
};

export const toolSchema = {
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string', description: 'function, or any tool type the model server knows' } },
  allOf: [
    whenType('function', {
      required: ['name'],
      properties: {
        name: functionName,
        description: nullable(text),
        parameters: nullable({ type: 'object' }),
        strict: nullable({ type: 'boolean' }),
      },
    }),
  ],
} as const;

export const toolChoiceSchema = {
  anyOf: [
    { enum: ['none', 'auto', 'required'] },
    { type: 'object', required: ['type'], properties: { type: text } },
  ],
} as const;

export const textConfigSchema = {
  type: 'object',
  properties: {
    format: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', description: 'text, json_object or json_schema' } },
      allOf: [
        whenType('json_schema', {
          required: ['name', 'schema'],
          properties: { name: text, schema: { type: 'object' }, strict: nullable({ type: 'boolean' }) },
        }),
      ],
    },
    verbosity: nullable({ enum: ['low', 'medium', 'high'] }),
  },
} as const;

export const reasoningSchema = {
  type: 'object',
  properties: { effort: nullable(text), summary: nullable(text), generate_summary: nullable(text) },
} as const;
