// SPEC §13 CH-2: the context a chain builds, a step's variables and its attachments.
import { chainContext, stepAttachments, stepVariables } from '../../domain/chain-run';

describe('CH-2 chain context', () => {
  const steps = [{ order: 1, outputVariable: 'draft' }, { order: 2 }, { order: 3, outputVariable: 'draft' }];

  it('CH-2: only output variables enter the context; a later step writing the same name wins', () => {
    expect(
      chainContext(steps, [
        { order: 3, text: 'second draft' },
        { order: 1, text: 'first draft' },
        { order: 2, text: 'not kept' },
      ]),
    ).toEqual({ draft: 'second draft' });
    expect(chainContext(steps, [{ order: 2, text: 'x' }])).toEqual({});
  });
});

describe('CH-2 step variables', () => {
  it('CH-2: templates resolve from the context, then the inputs; the prompt sees step, context, inputs', () => {
    const { variables, unresolved } = stepVariables(
      { summary: 'Summary: {{intake_summary}} for {{company_name}}', company_name: 'Override' },
      { intake_summary: '### Intake', company_name: 'From context' },
      { company_name: 'VeriPharma', risk_tier: 'HIGH' },
    );
    expect(unresolved).toEqual([]);
    expect(variables).toEqual({
      summary: 'Summary: ### Intake for From context',
      company_name: 'Override',
      intake_summary: '### Intake',
      risk_tier: 'HIGH',
    });
  });

  it('CH-2: one pass: a value that looks like a token is not expanded again; other tokens stay text', () => {
    const { variables, unresolved } = stepVariables(
      { a: '{{x}} {y} {{prompt:p}} {{foundationallm:current_datetime_utc}}' },
      { x: '{{y}}' },
      { y: 'never' },
    );
    expect(unresolved).toEqual([]);
    expect(variables.a).toBe('{{y}} {y} {{prompt:p}} {{foundationallm:current_datetime_utc}}');
  });

  it('CH-2: names found nowhere are reported once each, in order of appearance', () => {
    const { unresolved } = stepVariables({ a: '{{missing}} {{also}}', b: '{{missing}}' }, {}, {});
    expect(unresolved).toEqual(['missing', 'also']);
  });

  it('CH-2: inherited object properties are not values (toString, __proto__)', () => {
    const { unresolved } = stepVariables({ a: '{{toString}} {{__proto__}}' }, {}, {});
    expect(unresolved).toEqual(['toString', '__proto__']);
  });
});

describe('CH-2 step attachments', () => {
  it("CH-2: the request's attachments, then the step's own, each once", () => {
    const url = { type: 'url' as const, url: 'https://example.com/a.pdf' };
    const file = { type: 'file' as const, fileId: 'file_1' };
    expect(stepAttachments([url], [file, url])).toEqual([url, file]);
    expect(stepAttachments([url])).toEqual([url]);
    expect(stepAttachments([], [])).toEqual([]);
  });
});

describe('CH-2 odd names', () => {
  it('CH-2: `__proto__` is an ordinary variable and output name', () => {
    const own = JSON.parse('{"__proto__": "{{x}}"}') as Record<string, string>;
    const { variables } = stepVariables(own, { x: 'value' }, {});
    expect(Object.getOwnPropertyDescriptor(variables, '__proto__')?.value).toBe('value');
    const context = chainContext([{ order: 1, outputVariable: '__proto__' }], [{ order: 1, text: 't' }]);
    expect(Object.getOwnPropertyDescriptor(context, '__proto__')?.value).toBe('t');
  });
});
