// SPEC §1 bodies: strict schema validation → 400 (InvalidInput) naming the offending fields.
import { InvalidInput } from '../../domain/errors';
import { MAX_BODY_DEPTH, validate } from '../../api/validation';
import { createApiKeySchema, updateApiKeySchema } from '../../api/schemas/api-keys';
import { createLlmSchema, llmQuerySchema, updateLlmSchema } from '../../api/schemas/llms';
import { createResponseSchema } from '../../api/schemas/responses';

const LLM = { name: 'gpt', endpoint: 'https://api.openai.com/v1', model: 'gpt-4o-mini', api_key: 'sk-x' };

function rejection(schema: object, body: unknown): InvalidInput {
  try {
    validate(schema, body);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInput);
    return err as InvalidInput;
  }
  throw new Error(`expected InvalidInput for ${JSON.stringify(body)}`);
}

describe('validate (§1 bodies)', () => {
  it('§1: returns the body itself when it is valid', () => {
    const body = { ...LLM, description: null };
    expect(validate(createLlmSchema, body)).toBe(body);
    const query = { messages: [{ role: 'user', content: 'hi' }], temperature: 0, stream: 'sse' };
    expect(validate(llmQuerySchema, query)).toBe(query);
    expect(validate(createApiKeySchema, { name: 'k', permissions: ['read:agents'] })).toEqual({
      name: 'k',
      permissions: ['read:agents'],
    });
  });

  it('§1: an unknown top-level field is rejected, naming it', () => {
    const err = rejection(createLlmSchema, { ...LLM, foo: 1 });
    expect(err.message).toBe('Unknown field: foo');
    expect(err.items).toEqual([{ type: 'additionalProperties', path: 'foo', message: 'Unknown field: foo' }]);
  });

  it('§1: a typo of a known field is caught as an unknown field', () => {
    const err = rejection(llmQuerySchema, { messages: [{ role: 'user', content: 'x' }], temprature: 1 });
    expect(err.message).toContain('Unknown field: temprature');
  });

  it('§1: an unknown nested field names its path', () => {
    const err = rejection(llmQuerySchema, { messages: [{ role: 'user', content: 'x', name: 'bob' }] });
    expect(err.message).toContain('Unknown field: messages[0].name');
  });

  it('§1: a missing required field is named', () => {
    const { api_key: _omitted, ...withoutKey } = LLM;
    const err = rejection(createLlmSchema, withoutKey);
    expect(err.message).toBe('Missing required field: api_key');
    expect(err.items).toEqual([
      { type: 'required', path: 'api_key', message: 'Missing required field: api_key' },
    ]);
  });

  it('§1: a missing nested field names its path', () => {
    const err = rejection(llmQuerySchema, { messages: [{ role: 'user' }] });
    expect(err.message).toContain('Missing required field: messages[0].content');
  });

  it('§1: a wrong type names the path', () => {
    const err = rejection(llmQuerySchema, { messages: [{ role: 'user', content: 42 }] });
    expect(err.message).toBe('messages[0].content must be string');
    expect(err.items).toEqual([
      { type: 'type', path: 'messages[0].content', message: 'messages[0].content must be string' },
    ]);
  });

  it('§1: a deeper index is named too', () => {
    const err = rejection(llmQuerySchema, {
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
        { role: 'robot', content: 'c' },
      ],
    });
    expect(err.message).toContain(
      'messages[2].role must be one of "system", "developer", "user", "assistant"',
    );
  });

  it('§1: every problem is reported at once', () => {
    const err = rejection(createLlmSchema, { name: 5, foo: 1, bar: 2 });
    const paths = err.items!.map((i) => i.path).sort();
    expect(paths).toEqual(['api_key', 'bar', 'endpoint', 'foo', 'model', 'name']);
    for (const item of err.items!) {
      expect(typeof item.type).toBe('string');
      expect(typeof item.path).toBe('string');
      expect(typeof item.message).toBe('string');
      expect(err.message).toContain(item.message);
    }
  });

  it('§1: limits and formats are enforced', () => {
    expect(rejection(createLlmSchema, { ...LLM, endpoint: 'ftp://example.com' }).items![0]!.path).toBe(
      'endpoint',
    );
    expect(rejection(createLlmSchema, { ...LLM, api_key: '' }).items![0]!.path).toBe('api_key');
    expect(rejection(createLlmSchema, { ...LLM, name: '   ' }).items![0]!.path).toBe('name');
    expect(rejection(llmQuerySchema, { messages: [] }).items![0]!.path).toBe('messages');
    expect(
      rejection(llmQuerySchema, { messages: [{ role: 'user', content: 'x' }], temperature: 3 }).items![0]!
        .path,
    ).toBe('temperature');
  });

  it('§1: no type coercion: "1" is not a number', () => {
    expect(
      rejection(llmQuerySchema, { messages: [{ role: 'user', content: 'x' }], temperature: '1' }).message,
    ).toBe('temperature must be number');
  });

  it('§1: an empty update is rejected; a partial update is valid', () => {
    expect(() => validate(updateLlmSchema, {})).toThrow(InvalidInput);
    expect(() => validate(updateApiKeySchema, {})).toThrow(InvalidInput);
    expect(validate(updateLlmSchema, { model: 'gpt-4o' })).toEqual({ model: 'gpt-4o' });
  });

  it('AUTH-2: permissions must be a list of distinct strings', () => {
    expect(rejection(createApiKeySchema, { name: 'k', permissions: 'admin' }).items![0]!.path).toBe(
      'permissions',
    );
    expect(rejection(createApiKeySchema, { name: 'k', permissions: [1] }).items![0]!.path).toBe(
      'permissions[0]',
    );
    expect(
      rejection(createApiKeySchema, { name: 'k', permissions: ['admin', 'admin'] }).items![0]!.path,
    ).toBe('permissions');
  });

  it.each([
    ['an array', [LLM]],
    ['a string', 'hello'],
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
  ])('§1: a body that is %s is rejected', (_what, body) => {
    const err = rejection(createLlmSchema, body);
    expect(err.message).toMatch(/must be a JSON object/);
  });

  it('§1: the message names what was validated', () => {
    expect(() => validate(createLlmSchema, null, 'LLM')).toThrow(/^LLM must be a JSON object/);
  });

  it('LLM-1: an api_key that cannot travel in an HTTP header is rejected, naming the rule', () => {
    for (const api_key of ['sk-\u{1F600}', 'k\u0100', 'caf\u00e9', 'a\nb', ' sk-x', 'sk-x ']) {
      const err = rejection(createLlmSchema, { ...LLM, api_key });
      expect(err.items).toEqual([
        {
          type: 'pattern',
          path: 'api_key',
          message: 'api_key must be printable ASCII without leading or trailing spaces',
        },
      ]);
    }
    expect(validate(updateLlmSchema, { api_key: 'sk-proj_A1.b~c d' })).toEqual({
      api_key: 'sk-proj_A1.b~c d',
    });
  });

  it('§18: a body nested deeper than MAX_BODY_DEPTH is a 400, also far deeper than the stack', () => {
    const nested = (levels: number): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
      return value;
    };
    const schema = { type: 'object', properties: { metadata: {} } };
    expect(validate(schema, { metadata: nested(MAX_BODY_DEPTH - 1) })).toBeTruthy();
    for (const levels of [MAX_BODY_DEPTH, 20_000]) {
      expect(rejection(schema, { metadata: nested(levels) }).message).toBe(
        `Request body nests deeper than ${MAX_BODY_DEPTH} levels`,
      );
    }
  });

  it("§1: a union names what is wrong inside the branch of the value's type, not the other branch", () => {
    const err = rejection(createResponseSchema, { model: 'm', input: [{ content: 'x' }] });
    expect(err.items).toEqual([
      { type: 'required', path: 'input[0].role', message: 'Missing required field: input[0].role' },
    ]);
    // A value of neither type: both branches say so.
    expect(rejection(createResponseSchema, { model: 'm', input: 5 }).message).toBe(
      'input must be string; input must be array',
    );
  });

  it('OR-1: a create accepts plain requests, item types it does not know and extra keys in items', () => {
    const body = {
      model: 'm',
      input: [
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'a', annotations: [] }],
        },
        { type: 'compaction', id: 'cmp_1', encrypted_content: 'e', created_by: 'x' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      ],
      store: false,
      stream_options: { include_obfuscation: false },
      prompt_cache_retention: '24h',
    };
    expect(validate(createResponseSchema, body)).toBe(body);
    expect(rejection(createResponseSchema, { model: 'm', input: [{ type: 'compaction' }] }).items).toEqual([
      expect.objectContaining({ path: 'input[0].encrypted_content', type: 'required' }),
    ]);
  });
});
