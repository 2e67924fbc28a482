// SPEC §8.2 AG-1..AG-10 (the unprefixed `{{name}}` part; references are checked with the prompt
// library), §8.4 input_variables and §18 limits, on the pure normaliser.
import { InvalidInput, type ErrorItem } from '../../domain/errors';
import { inputVariables } from '../../domain/agent-definition';
import { normaliseAgent } from '../../domain/agent-rules';

const system = { role: 'system', template: 'Be brief.' };
const user = (template = 'Question: {question}') => ({ role: 'user', template });
const question = { name: 'question', type: 'query' };
const base = { prompt: [system, user()], placeholders: [question] };

function problems(
  input: Parameters<typeof normaliseAgent>[0],
  limits?: Parameters<typeof normaliseAgent>[1],
) {
  try {
    normaliseAgent(input, limits);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInput);
    const e = err as InvalidInput;
    expect(e.items?.length).toBeGreaterThan(0);
    expect(e.message).toBe(e.items!.map((i) => i.message).join('; '));
    return { message: e.message, items: e.items as ErrorItem[] };
  }
  throw new Error(`expected InvalidInput for ${JSON.stringify(input)}`);
}
const messages = (...args: Parameters<typeof problems>) => problems(...args).items.map((i) => i.message);
const withPlaceholder = (p: Record<string, unknown>) => ({
  prompt: [system, user('{question} {context}')],
  placeholders: [question, { name: 'context', ...p }],
});

describe('AG seed 000', () => {
  it('AG-8 the support-answers agent normalises with include materialised and {k:5, threshold:null}', () => {
    const def = normaliseAgent({
      prompt: [
        {
          role: 'system',
          template:
            'Answer using only the reference text. If the reference text does not contain the answer, say that the answer is not available.',
        },
        { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}' },
      ],
      placeholders: [
        { name: 'question', type: 'query' },
        { name: 'context', type: 'similarity', target: 'question', params: { k: 5 } },
      ],
    });
    expect(def).toEqual({
      prompt: [
        { role: 'system', template: expect.stringMatching(/^Answer using only/), include: true },
        { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}', include: true },
      ],
      placeholders: [
        { name: 'question', type: 'query' },
        { name: 'context', type: 'similarity', target: 'question', params: { k: 5, threshold: null } },
      ],
      metadata: {},
      tools: [],
    });
    expect(inputVariables(def)).toEqual(['question']);
  });
});

describe('AG-1..AG-3 messages', () => {
  it('AG-1 at least one system message', () => {
    expect(messages({ prompt: [user()], placeholders: [question] })).toEqual([
      'The prompt must contain at least one system message',
    ]);
  });
  it('AG-2 at least one user message (an empty prompt breaks AG-1 and AG-2)', () => {
    expect(messages({ prompt: [system], placeholders: [] })).toEqual([
      'The prompt must contain at least one user message',
      'The last prompt message must have role user',
    ]);
    expect(messages({ prompt: [], placeholders: [] })).toEqual([
      'The prompt must contain at least one system message',
      'The prompt must contain at least one user message',
    ]);
  });
  it('AG-3 the last stored message has role user, even when it is not included', () => {
    const { message, items } = problems({
      prompt: [system, user(), { role: 'assistant', template: 'ok', include: false }],
      placeholders: [question],
    });
    expect(message).toBe('The last prompt message must have role user');
    expect(items).toEqual([
      {
        type: 'last_message_not_user',
        path: 'prompt[2].role',
        message: 'The last prompt message must have role user',
      },
    ]);
    expect(() =>
      normaliseAgent({ prompt: [system, { ...user(), include: false }], placeholders: [question] }),
    ).not.toThrow();
  });
  it('AG-1 message shape: role, template, include, unknown fields, 50 messages', () => {
    expect(
      messages({
        prompt: [
          { role: 'tool', template: 'x' },
          { role: 'system', template: 3, include: 'yes', extra: 1 },
          'hello',
          user(),
        ],
        placeholders: [question],
      }),
    ).toEqual([
      'prompt[0].role must be system, user or assistant',
      'prompt[1]: unknown field extra',
      'prompt[1].template must be a string',
      'prompt[1].include must be a boolean',
      'prompt[2] must be an object',
    ]);
    expect(messages({ prompt: 'hi', placeholders: [] })[0]).toBe('prompt must be an array of messages');
    // paths stay aligned with the given list when an entry is not an object
    expect(messages({ prompt: [null, system, user('{foo}')], placeholders: [] })).toEqual([
      'prompt[0] must be an object',
      'Unknown placeholder {foo} in prompt[2].template',
    ]);
    const many = [system, ...Array.from({ length: 50 }, () => user())];
    expect(messages({ prompt: many, placeholders: [question] })).toEqual([
      'prompt has 51 messages; the limit is 50',
    ]);
  });
  it('AG-1 a template is at most 100 KB (UTF-8 bytes)', () => {
    const ok = 'é'.repeat(51_200); // 102400 bytes
    expect(() => normaliseAgent({ prompt: [system, user(ok)], placeholders: [] })).not.toThrow();
    expect(messages({ prompt: [system, user(`${ok}x`)], placeholders: [] })).toEqual([
      'prompt[1].template is 102401 bytes; the template limit is 102400 bytes',
    ]);
  });
});

describe('AG-4 and AG-10 templates', () => {
  it('AG-4 every {name} in any template, included or not, names a placeholder', () => {
    const { message, items } = problems({
      prompt: [system, { role: 'user', template: 'x {foo} {foo} {bar}', include: false }, user()],
      placeholders: [question],
    });
    expect(message).toBe(
      'Unknown placeholder {foo} in prompt[1].template; Unknown placeholder {bar} in prompt[1].template',
    );
    expect(items[0]).toEqual({
      type: 'unknown_placeholder',
      path: 'prompt[1].template',
      message: 'Unknown placeholder {foo} in prompt[1].template',
    });
  });
  it('AG-4 there are no built-in placeholders: {context} means nothing unless declared', () => {
    expect(messages({ prompt: [system, user('{context} {question}')], placeholders: [question] })).toEqual([
      'Unknown placeholder {context} in prompt[1].template',
    ]);
  });
  it('AG-4 other braces are literal text', () => {
    const template =
      '{ } {"a":1} {a_b} {{prompt:x}} {{foundationallm:current_datetime_utc:HH:mm:ss}} {1} {question}';
    expect(() =>
      normaliseAgent({ prompt: [system, user(template)], placeholders: [question] }),
    ).not.toThrow();
  });
  it('AG-10 an unprefixed {{name}} in an agent template → 400', () => {
    const { items } = problems({
      prompt: [{ role: 'system', template: 'Hi {{name}} and {{name}}' }, user('{{question}}')],
      placeholders: [question],
    });
    expect(items).toEqual([
      {
        type: 'double_brace_variable',
        path: 'prompt[0].template',
        message: 'Double-brace variables are not allowed in agent templates: {{name}} in prompt[0].template',
      },
      {
        type: 'double_brace_variable',
        path: 'prompt[1].template',
        message:
          'Double-brace variables are not allowed in agent templates: {{question}} in prompt[1].template',
      },
    ]);
  });
});

describe('AG-5..AG-7 placeholders', () => {
  it('AG-5 names match ^[A-Za-z][A-Za-z0-9]*$ and are unique', () => {
    expect(
      messages({
        prompt: [system, user('{question}')],
        placeholders: [question, { name: 'my_var', type: 'query' }, { name: '1a', type: 'query' }, question],
      }),
    ).toEqual([
      'Placeholder my_var: name must match ^[A-Za-z][A-Za-z0-9]*$',
      'Placeholder 1a: name must match ^[A-Za-z][A-Za-z0-9]*$',
      'Duplicate placeholder name: question',
    ]);
    expect(messages({ prompt: [system, user('x')], placeholders: [{ type: 'query' }] })).toEqual([
      'placeholders[0].name must be a string',
    ]);
  });
  it('AG-5 at most 20 placeholders', () => {
    const many = Array.from({ length: 21 }, (_, i) => ({ name: `q${i}`, type: 'query' }));
    expect(messages({ prompt: [system, user('x')], placeholders: many })).toEqual([
      'placeholders has 21 entries; the limit is 20',
    ]);
  });
  it('AG-6 a retrieval placeholder has a target naming a query placeholder', () => {
    expect(messages(withPlaceholder({ type: 'similarity' }))).toEqual([
      'Placeholder context: target is required',
    ]);
    expect(messages(withPlaceholder({ type: 'mmr', target: 'nope' }))).toEqual([
      'Placeholder context: target nope must name a query placeholder',
    ]);
    expect(messages(withPlaceholder({ type: 'mmr', target: 'context' }))).toEqual([
      'Placeholder context: target context must name a query placeholder',
    ]);
    expect(messages(withPlaceholder({ type: 'mmr', target: 7 }))).toEqual([
      'Placeholder context: target must be a string',
    ]);
  });
  it('AG-6 several retrieval placeholders may target the same or different query placeholders', () => {
    const def = normaliseAgent({
      prompt: [system, user('{q1}{q2}{r1}{r2}{r3}')],
      placeholders: [
        { name: 'r1', type: 'similarity', target: 'q2' },
        { name: 'q1', type: 'query' },
        { name: 'q2', type: 'query' },
        { name: 'r2', type: 'mmr', target: 'q1' },
        { name: 'r3', type: 'similarity', target: 'q1' },
      ],
    });
    expect(inputVariables(def)).toEqual(['q1', 'q2']);
  });
  it('AG-7 type is query, similarity or mmr; full_text and hybrid are not available', () => {
    expect(messages(withPlaceholder({ type: 'full_text', target: 'question' }))).toEqual([
      'Placeholder context: full_text is not available as placeholders',
    ]);
    expect(messages(withPlaceholder({ type: 'hybrid', target: 'question' }))).toEqual([
      'Placeholder context: hybrid is not available as placeholders',
    ]);
    expect(messages(withPlaceholder({ type: 'keyword' }))).toEqual([
      'Placeholder context: type must be query, similarity or mmr',
    ]);
  });
  it('AG-7 a query placeholder with target or params → 400; unknown fields → 400', () => {
    expect(
      messages({
        prompt: [system, user()],
        placeholders: [{ ...question, target: 'question', params: { k: 1 }, extra: true }],
      }),
    ).toEqual([
      'Placeholder question: unknown field extra',
      'Placeholder question: a query placeholder takes no target',
      'Placeholder question: a query placeholder takes no params',
    ]);
    expect(messages(withPlaceholder({ type: 'mmr', target: 'question', filter: {} }))).toEqual([
      'Placeholder context: unknown field filter',
    ]);
  });
});

describe('AG-8 params quirk', () => {
  const params = (p: Record<string, unknown>) => normaliseAgent(withPlaceholder(p)).placeholders[1];
  it('AG-8 without params: the SR-2 defaults', () => {
    expect(params({ type: 'similarity', target: 'question' })).toMatchObject({
      params: { k: 5, threshold: null },
    });
    expect(params({ type: 'mmr', target: 'question' })).toMatchObject({
      params: { k: 5, fetch_k: 10, lambda_mult: 0.5, threshold: null },
    });
  });
  it('AG-8 with params: omitted numeric fields are 0, threshold stays null', () => {
    expect(params({ type: 'mmr', target: 'question', params: { k: 3 } })).toEqual({
      name: 'context',
      type: 'mmr',
      target: 'question',
      params: { k: 3, fetch_k: 0, lambda_mult: 0, threshold: null },
    });
    expect(
      params({ type: 'similarity', target: 'question', params: { k: 2, threshold: 0.4 } }),
    ).toMatchObject({
      params: { k: 2, threshold: 0.4 },
    });
    expect(
      params({
        type: 'mmr',
        target: 'question',
        params: { k: 100, fetch_k: 1000, lambda_mult: 1, threshold: 0 },
      }),
    ).toMatchObject({ params: { k: 100, fetch_k: 1000, lambda_mult: 1, threshold: 0 } });
  });
  it('AG-8 params: {} (k = 0) → 400', () => {
    const { message, items } = problems(
      withPlaceholder({ type: 'similarity', target: 'question', params: {} }),
    );
    expect(message).toBe('Placeholder context: k must be at least 1');
    expect(items).toEqual([
      {
        type: 'out_of_range',
        path: 'placeholders[1].params.k',
        message: 'Placeholder context: k must be at least 1',
      },
    ]);
    expect(messages(withPlaceholder({ type: 'mmr', target: 'question', params: { k: 0 } }))).toEqual([
      'Placeholder context: k must be at least 1',
    ]);
  });
  it('AG-8 fields that do not belong to the type → 400', () => {
    expect(
      messages(withPlaceholder({ type: 'similarity', target: 'question', params: { k: 1, fetch_k: 4 } })),
    ).toEqual(['Placeholder context: fetch_k is not a parameter of similarity placeholders']);
    expect(
      messages(withPlaceholder({ type: 'mmr', target: 'question', params: { k: 1, filter: {} } })),
    ).toEqual(['Placeholder context: filter is not a parameter of mmr placeholders']);
  });
  it('AG-8 ranges as SR-2', () => {
    const mmr = (p: Record<string, unknown>) =>
      messages(withPlaceholder({ type: 'mmr', target: 'question', params: p }));
    expect(mmr({ k: 101 })).toEqual(['Placeholder context: k must be at most 100']);
    expect(mmr({ k: 1.5 })).toEqual(['Placeholder context: k must be an integer']);
    expect(mmr({ k: '3' })).toEqual(['Placeholder context: k must be an integer']);
    expect(mmr({ k: 1, fetch_k: -1 })).toEqual(['Placeholder context: fetch_k must be at least 0']);
    expect(mmr({ k: 1, fetch_k: 1001 })).toEqual(['Placeholder context: fetch_k must be at most 1000']);
    expect(mmr({ k: 1, lambda_mult: 1.1 })).toEqual(['Placeholder context: lambda_mult must be at most 1']);
    expect(mmr({ k: 1, lambda_mult: -0.1 })).toEqual(['Placeholder context: lambda_mult must be at least 0']);
    expect(mmr({ k: 1, threshold: -0.5 })).toEqual([
      'Placeholder context: threshold must be null or a number at least 0',
    ]);
    expect(mmr({ k: 1, threshold: 'x' })).toEqual([
      'Placeholder context: threshold must be null or a number at least 0',
    ]);
    expect(messages(withPlaceholder({ type: 'mmr', target: 'question', params: [] }))).toEqual([
      'Placeholder context: params must be an object',
    ]);
  });
  it('AG-8 k ≤ 100 follows the configured limit', () => {
    const input = withPlaceholder({ type: 'similarity', target: 'question', params: { k: 50 } });
    expect(messages(input, { k: 20 })).toEqual(['Placeholder context: k must be at most 20']);
  });
});

describe('AG-9 metadata and tools', () => {
  it('AG-9 each top-level value of metadata is a JSON object', () => {
    expect(normaliseAgent({ ...base, metadata: { ui: { color: 'red' }, owner: {} } }).metadata).toEqual({
      ui: { color: 'red' },
      owner: {},
    });
    expect(messages({ ...base, metadata: { ui: 'red', list: [], none: null } })).toEqual([
      'metadata.ui must be a JSON object',
      'metadata.list must be a JSON object',
      'metadata.none must be a JSON object',
    ]);
    expect(messages({ ...base, metadata: [] })).toEqual(['metadata must be an object']);
  });
  it('§8.1 tools: [{name, description, router_prompt?}], default []', () => {
    const tools = [
      { name: 'search', description: 'Finds things', router_prompt: 'Use it.' },
      { name: 'x', description: '' },
    ];
    expect(normaliseAgent({ ...base, tools }).tools).toEqual(tools);
    expect(messages({ ...base, tools: [{ name: 1, router_prompt: 2, more: true }, 'y'] })).toEqual([
      'tools[0]: unknown field more',
      'tools[0].name must be a non-empty string',
      'tools[0].description must be a string',
      'tools[0].router_prompt must be a string',
      'tools[1] must be an object',
    ]);
    expect(messages({ ...base, tools: {} })).toEqual(['tools must be an array']);
  });
});

describe('AG collects every problem', () => {
  it('AG one error lists every problem, in prompt, placeholders, metadata, tools order', () => {
    const { items } = problems({
      prompt: [{ role: 'assistant', template: '{foo}' }],
      placeholders: [{ name: 'ctx', type: 'similarity', params: {} }],
      metadata: { a: 1 },
      tools: 'none',
    });
    expect(items.map((i) => [i.type, i.path])).toEqual([
      ['missing_system_message', 'prompt'],
      ['missing_user_message', 'prompt'],
      ['last_message_not_user', 'prompt[0].role'],
      ['unknown_placeholder', 'prompt[0].template'],
      ['missing_target', 'placeholders[0].target'],
      ['out_of_range', 'placeholders[0].params.k'],
      ['invalid_metadata', 'metadata.a'],
      ['invalid_type', 'tools'],
    ]);
  });
});
