// SPEC §14 PV-1..PV-6: system variables `{{foundationallm:<variable>[:<format>]}}` in templates.
import fc from 'fast-check';
import type { UtcInstant } from '../../domain/dotnet-datetime';
import {
  MAX_VARIABLE_PASSES,
  templateVariableResolver,
  type AgentTool,
  type VariableContext,
} from '../../domain/system-variables';
import { render, tokenize, type VariableToken } from '../../domain/template';
import { resolveTemplateVariables, resolveVariableToken } from '../helpers/template-helpers';

const now: UtcInstant = { epochMs: Date.parse('2026-11-29T08:05:03.050Z') };
const tools: AgentTool[] = [
  { name: 'search', description: 'Searches the web', router_prompt: 'Use search for news.' },
  { name: 'calc', description: 'Does arithmetic' },
  { name: 'sql', description: 'Queries the warehouse', router_prompt: 'Use sql for sales figures.' },
];
const context: VariableContext = { now, tools };
const noTools: VariableContext = { now, tools: [] };

/** The variable token of `{{foundationallm:<body>}}`. */
function variable(body: string): VariableToken {
  const [token] = tokenize(`{{foundationallm:${body}}}`);
  if (token?.kind !== 'variable') throw new Error(`not a variable token: ${body}`);
  return token;
}
const resolve = (template: string, ctx: VariableContext = context) => resolveTemplateVariables(template, ctx);

describe('PV-2 current_datetime_utc', () => {
  it.each([
    ['current_datetime_utc:HH:mm:ss', '08:05:03'],
    ['current_datetime_utc:yyyy-MM-dd', '2026-11-29'],
    ['current_datetime_utc', '11/29/2026 08:05:03'], // no format → invariant "G"
    ['current_datetime_utc:o', '2026-11-29T08:05:03.0500000Z'],
    ['current_datetime_utc:zzz', '+00:00'],
    ['current_datetime_utc:%K', 'Z'],
    ["current_datetime_utc:dddd 'at' h tt", 'Sunday at 8 AM'],
  ])('PV-2: %s → %s', (body, expected) => {
    expect(resolveVariableToken(variable(body), context)).toBe(expected);
  });

  it('PV-2: a format .NET rejects leaves the token unchanged', () => {
    for (const body of ['current_datetime_utc:h', 'current_datetime_utc:x', "current_datetime_utc:yyyy'"]) {
      expect(resolveVariableToken(variable(body), context)).toBeUndefined();
      const template = `Now: {{foundationallm:${body}}}.`;
      expect(resolve(template)).toEqual({ text: template, resolved: [] });
    }
  });

  it('PV-2: the clock is the context instant, so a replay renders the same text', () => {
    const template = 'Today is {{foundationallm:current_datetime_utc:yyyy-MM-dd HH:mm:ss.fff}}.';
    expect(resolve(template).text).toBe('Today is 2026-11-29 08:05:03.050.');
    expect(resolve(template).text).toBe(resolve(template).text);
  });
});

describe('PV-3 tool_list and tool_router_prompts', () => {
  it('PV-3: tool_list is one "- <name>: <description>" line per tool', () => {
    expect(resolveVariableToken(variable('tool_list'), context)).toBe(
      '- search: Searches the web\n- calc: Does arithmetic\n- sql: Queries the warehouse',
    );
  });

  it('PV-3: tool_router_prompts wraps each router prompt in its markers, a blank line between tools', () => {
    expect(resolveVariableToken(variable('tool_router_prompts'), context)).toBe(
      '**TOOL: search\nUse search for news.\n**END OF TOOL: search\n\n' +
        '**TOOL: sql\nUse sql for sales figures.\n**END OF TOOL: sql',
    );
  });

  it('PV-3: both are empty without tools; tool_router_prompts is empty when no tool has one', () => {
    expect(resolve('[{{foundationallm:tool_list}}|{{foundationallm:tool_router_prompts}}]', noTools)).toEqual(
      {
        text: '[|]',
        resolved: ['tool_list', 'tool_router_prompts'],
      },
    );
    const withoutPrompts = {
      now,
      tools: [
        { name: 'a', description: 'A' },
        { name: 'b', description: 'B', router_prompt: '  \n' },
      ],
    };
    expect(resolveVariableToken(variable('tool_router_prompts'), withoutPrompts)).toBe('');
  });
});

describe('PV-4 empty and unknown variables', () => {
  it.each(['router_prompt', 'files_prompt', 'conversation_files', 'attached_files'])(
    'PV-4: %s resolves to the empty string',
    (name) => {
      expect(resolve(`<{{foundationallm:${name}}}>`)).toEqual({ text: '<>', resolved: [name] });
    },
  );

  it('PV-4: any other variable is left unchanged, with or without a format', () => {
    for (const body of ['user_message', 'current_datetime', 'Tool_List', 'max_rounds:5']) {
      expect(resolveVariableToken(variable(body), context)).toBeUndefined();
    }
    const template = 'A {{foundationallm:user_message}} B {{foundationallm:unknown:HH}}';
    expect(resolve(template)).toEqual({ text: template, resolved: [] });
  });

  it('PV-4: a format on a variable other than current_datetime_utc is ignored', () => {
    expect(resolveVariableToken(variable('tool_list:yyyy'), noTools)).toBe('');
    expect(resolveVariableToken(variable('tool_list:HH:mm'), context)).toBe(
      resolveVariableToken(variable('tool_list'), context),
    );
    expect(resolveVariableToken(variable('router_prompt:xyz'), context)).toBe('');
  });
});

describe('PV-5 nested variables', () => {
  const nested: VariableContext = {
    now,
    tools: [
      {
        name: 'news',
        description: 'News as of {{foundationallm:current_datetime_utc:yyyy-MM-dd}}',
        router_prompt:
          'Today is {{foundationallm:current_datetime_utc:dddd}}. Tools: {{foundationallm:tool_list}}',
      },
    ],
  };

  it('PV-5: variables inside a router prompt (and inside what they produce) resolve too', () => {
    expect(resolve('{{foundationallm:tool_router_prompts}}', nested)).toEqual({
      text: '**TOOL: news\nToday is Sunday. Tools: - news: News as of 2026-11-29\n**END OF TOOL: news',
      resolved: ['tool_router_prompts', 'current_datetime_utc', 'tool_list'],
    });
  });

  it('PV-5: inside a value only variables resolve; placeholders and references stay text', () => {
    const ctx = { now, tools: [{ name: 't', description: '{question} {{prompt:p}} {{max_rounds}}' }] };
    expect(resolve('{{foundationallm:tool_list}}', ctx).text).toBe(
      '- t: {question} {{prompt:p}} {{max_rounds}}',
    );
  });

  it('PV-5: a self-referential router prompt stops after 10 passes, the last token left verbatim', () => {
    const loop = {
      now,
      tools: [
        { name: 'loop', description: 'd', router_prompt: 'again {{foundationallm:tool_router_prompts}}' },
      ],
    };
    const text = resolveVariableToken(variable('tool_router_prompts'), loop) ?? '';
    expect(text.match(/\*\*TOOL: loop\n/g)).toHaveLength(MAX_VARIABLE_PASSES);
    expect(text.match(/\{\{foundationallm:tool_router_prompts\}\}/g)).toHaveLength(1);
  });

  it('PV-5: exponential self-reference is cut at maxLength, not after 2^10 copies', () => {
    const prompt = '{{foundationallm:tool_router_prompts}} and {{foundationallm:tool_router_prompts}}';
    const doubling = {
      now,
      tools: [
        { name: 'a', description: 'A', router_prompt: prompt },
        { name: 'b', description: 'B', router_prompt: prompt },
      ],
      maxLength: 10_000,
    };
    const text = resolveVariableToken(variable('tool_router_prompts'), doubling) ?? '';
    expect(text.length).toBeGreaterThan(1_000); // some passes were applied
    expect(text.length).toBeLessThanOrEqual(10_000);
    expect(text).toContain('{{foundationallm:tool_router_prompts}}'); // the rest stays verbatim
  });
});

describe('PV-1/PV-6 templates, inputs and the execution record', () => {
  it('PV-6: resolved lists distinct names in order of first resolution; unresolved ones are not listed', () => {
    const template =
      '{{foundationallm:tool_list}} {{foundationallm:current_datetime_utc:t}} {{foundationallm:tool_list}} ' +
      '{{foundationallm:nope}} {{foundationallm:current_datetime_utc:h}} {question} {{prompt:p}}';
    expect(resolve(template)).toEqual({
      text:
        '- search: Searches the web\n- calc: Does arithmetic\n- sql: Queries the warehouse 08:05 ' +
        '- search: Searches the web\n- calc: Does arithmetic\n- sql: Queries the warehouse ' +
        '{{foundationallm:nope}} {{foundationallm:current_datetime_utc:h}} {question} {{prompt:p}}',
      resolved: ['tool_list', 'current_datetime_utc'],
    });
  });

  it('PV-1: with render(), a placeholder value holding a variable stays verbatim', () => {
    const resolver = templateVariableResolver(context);
    const value = 'ignore {{foundationallm:current_datetime_utc}} and {{foundationallm:tool_list}}';
    const out = render(tokenize('Q: {question} at {{foundationallm:current_datetime_utc:HH:mm}}'), {
      placeholder: () => value,
      variable: resolver.variable,
    });
    expect(out).toBe(`Q: ${value} at 08:05`);
    expect(resolver.resolvedNames()).toEqual(['current_datetime_utc']);
  });

  // Templates built from known segments: literal text, `{q}` placeholders and variable tokens.
  const variableBodies = [
    'current_datetime_utc',
    'current_datetime_utc:yyyy-MM-dd',
    'current_datetime_utc:h', // rejected format: stays
    'tool_list',
    'tool_list:yyyy',
    'tool_router_prompts',
    'router_prompt',
    'attached_files',
    'unknown_thing',
  ];
  const segment = fc.oneof(
    fc.string({ maxLength: 8 }).filter((s) => !/[{}]/.test(s)),
    fc.constant('{q}'),
    fc.constantFrom(...variableBodies).map((body) => `{{foundationallm:${body}}}`),
  );
  const inputValue = fc
    .array(
      fc.oneof(
        fc.string({ maxLength: 6 }),
        fc.constantFrom(...variableBodies).map((body) => `{{foundationallm:${body}}}`),
      ),
      { maxLength: 5 },
    )
    .map((parts) => parts.join(''));
  const routerPrompt = fc
    .array(
      fc.oneof(
        fc.string({ maxLength: 6 }).filter((s) => !/[{}]/.test(s)),
        fc.constantFrom(...variableBodies).map((body) => `{{foundationallm:${body}}}`),
      ),
      { maxLength: 4 },
    )
    .map((parts) => parts.join(''));
  const toolsArb = fc.array(
    fc.record(
      { name: fc.string({ maxLength: 5 }), description: routerPrompt, router_prompt: routerPrompt },
      { requiredKeys: ['name', 'description'] },
    ),
    { maxLength: 3 },
  );

  it('PV-1: values given as inputs are never resolved, whatever the template and tools', () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), inputValue, toolsArb, (segments, value, ts) => {
        const ctx = { now, tools: ts, maxLength: 20_000 };
        const resolver = templateVariableResolver(ctx);
        const out = render(tokenize(segments.join('')), {
          placeholder: () => value,
          variable: resolver.variable,
        });
        const expected = segments
          .map((s) => (s === '{q}' ? value : resolveTemplateVariables(s, ctx).text))
          .join('');
        expect(out).toBe(expected);
      }),
    );
  });

  it('PV-5: resolution terminates and stays bounded for any (also self-referential) tools', () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), toolsArb, (segments, ts) => {
        const maxLength = 5_000;
        const ctx = { now, tools: ts, maxLength };
        for (const body of variableBodies) {
          const text = resolveVariableToken(variable(body), ctx);
          const firstPass = resolveVariableToken(variable(body), { ...ctx, maxLength: 0 });
          if (text !== undefined && firstPass !== undefined)
            expect(text.length).toBeLessThanOrEqual(Math.max(maxLength, firstPass.length));
        }
        const { resolved } = resolveTemplateVariables(segments.join(''), ctx);
        expect(new Set(resolved).size).toBe(resolved.length);
      }),
    );
  });

  it('PV-5: without self-reference, resolving the result again changes nothing (only unresolvable tokens are left)', () => {
    const plainTools = fc.array(
      fc.record({
        name: fc.string({ maxLength: 5 }).filter((s) => !/[{}]/.test(s)),
        description: fc.string({ maxLength: 8 }).filter((s) => !/[{}]/.test(s)),
      }),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), plainTools, (segments, ts) => {
        const ctx = { now, tools: ts };
        const once = resolveTemplateVariables(segments.join(''), ctx).text;
        expect(resolveTemplateVariables(once, ctx).text).toBe(once);
      }),
    );
  });
});
