// SPEC §8.2 AG-4/AG-10, §9.3 EX-3/EX-4, §12 PC-3, §14 PV-1: the tokenizer, the single-pass
// renderer and the post-render placeholder check.
import fc from 'fast-check';
import { findPlaceholderLike, render, tokenize, tokenText, type Token } from '../../domain/template';
import { placeholderNames } from '../helpers/template-helpers';
import {
  referencePlaceholderLike,
  referencePlaceholders,
  referenceRender,
} from '../helpers/template-reference';

const text = (t: string): Token => ({ kind: 'text', text: t });
const ph = (name: string, start: number): Token => ({ kind: 'placeholder', name, start });
const dbl = (name: string, start: number): Token => ({ kind: 'double', name, raw: `{{${name}}}`, start });

describe('EX-3 tokenize', () => {
  const table: [string, Token[]][] = [
    ['', []],
    ['plain text', [text('plain text')]],
    ['Q: {question}', [text('Q: '), ph('question', 3)]],
    ['{a}{B2}', [ph('a', 0), ph('B2', 3)]],
    ['{{question}}', [dbl('question', 0)]],
    ['{{{question}}}', [text('{'), dbl('question', 1), text('}')]],
    ['{{question}', [text('{'), ph('question', 1)]],
    ['{question}}', [ph('question', 0), text('}')]],
    ['{{_snake_case1}}', [dbl('_snake_case1', 0)]],
    ['{{ question }}', [text('{{ question }}')]],
    ['{{1x}}', [text('{{1x}}')]],
    // literal braces (AG-4: "other braces are literal text")
    ['{ }', [text('{ }')]],
    ['{"a":1}', [text('{"a":1}')]],
    ['{a_b}', [text('{a_b}')]],
    ['{1}', [text('{1}')]],
    ['{é}', [text('{é}')]],
    ['{}', [text('{}')]],
    ['a { b', [text('a { b')]],
    ['}} and }', [text('}} and }')]],
    ['{ {x} }', [text('{ '), ph('x', 2), text(' }')]],
    ['{{x}y}}', [text('{'), ph('x', 1), text('y}}')]],
    // PV-1 variables: the format is everything after the second `:` up to the closing `}}`
    [
      '{{foundationallm:current_datetime_utc:HH:mm:ss}}',
      [
        {
          kind: 'variable',
          variable: 'current_datetime_utc',
          format: 'HH:mm:ss',
          raw: '{{foundationallm:current_datetime_utc:HH:mm:ss}}',
          start: 0,
        },
      ],
    ],
    [
      'at {{foundationallm:tool_list}}.',
      [
        text('at '),
        { kind: 'variable', variable: 'tool_list', raw: '{{foundationallm:tool_list}}', start: 3 },
        text('.'),
      ],
    ],
    [
      "{{foundationallm:current_datetime_utc:yyyy-MM-dd 'at' h}m}}",
      [
        {
          kind: 'variable',
          variable: 'current_datetime_utc',
          format: "yyyy-MM-dd 'at' h}m",
          raw: "{{foundationallm:current_datetime_utc:yyyy-MM-dd 'at' h}m}}",
          start: 0,
        },
      ],
    ],
    [
      '{{foundationallm:current_datetime_utc:}}',
      [
        {
          kind: 'variable',
          variable: 'current_datetime_utc',
          raw: '{{foundationallm:current_datetime_utc:}}',
          start: 0,
        },
      ],
    ],
    ['{{foundationallm:}}', [text('{{foundationallm:}}')]],
    ['{{foundationallm:tool list}}', [text('{{foundationallm:tool list}}')]],
    ['{{foundationallm:x:a\nb}}', [text('{{foundationallm:x:a\nb}}')]],
    ['{{FoundationaLLM:x}}', [text('{{FoundationaLLM:x}}')]],
    ['{{foundationallm:x:{y}}}', [text('{{foundationallm:x:'), ph('y', 19), text('}}')]],
    // PC-3 references
    [
      'See {{prompt:legal_guidelines}}',
      [
        text('See '),
        { kind: 'prompt', promptId: 'legal_guidelines', raw: '{{prompt:legal_guidelines}}', start: 4 },
      ],
    ],
    [
      '{{prompt:abc|mode=execute}}',
      [{ kind: 'prompt', promptId: 'abc', mode: 'execute', raw: '{{prompt:abc|mode=execute}}', start: 0 }],
    ],
    [
      '{{prompt:chain.policy-check|mode=AUTO}}',
      [
        {
          kind: 'prompt',
          promptId: 'chain.policy-check',
          mode: 'auto',
          raw: '{{prompt:chain.policy-check|mode=AUTO}}',
          start: 0,
        },
      ],
    ],
    ['{{prompt:abc}', [text('{{prompt:abc}')]],
    ['{{prompt:abc}}}', [{ kind: 'prompt', promptId: 'abc', raw: '{{prompt:abc}}', start: 0 }, text('}')]],
    ['{{{prompt:abc}}', [text('{'), { kind: 'prompt', promptId: 'abc', raw: '{{prompt:abc}}', start: 1 }]],
    ['{{prompt:{x}}}', [text('{{prompt:'), ph('x', 9), text('}}')]],
    ['{{Prompt:abc}}', [text('{{Prompt:abc}}')]],
    ['[template_123]', [text('[template_123]')]],
    ['{{prompt}}', [dbl('prompt', 0)]],
  ];

  it.each(table)('EX-3 tokenizes %j', (template, expected) => {
    expect(tokenize(template)).toEqual(expected);
  });

  it.each([
    ['{{prompt:abc|x=1}}', 'abc', /Unknown reference parameter "x"/],
    ['{{prompt:}}', '', /Invalid prompt id ""/],
    ['{{prompt:a b}}', 'a b', /Invalid prompt id "a b"/],
    [`{{prompt:${'a'.repeat(129)}}}`, 'a'.repeat(129), /Invalid prompt id/],
    ['{{prompt:abc|mode=fast}}', 'abc', /Invalid mode "fast": expected template, execute or auto/],
    ['{{prompt:abc|mode=auto|mode=auto}}', 'abc', /more than once/],
    ['{{prompt:abc|var1=value}}', 'abc', /Unknown reference parameter "var1"/],
    ['{{prompt:abc|}}', 'abc', /Unknown reference parameter ""/],
    ['{{prompt:a}b}}', 'a}b', /Invalid prompt id "a}b"/],
  ])('PC-3 %s is a prompt token with an error', (template, promptId, error) => {
    const [token, ...rest] = tokenize(template);
    expect(rest).toEqual([]);
    expect(token).toMatchObject({ kind: 'prompt', promptId, raw: template, start: 0 });
    expect(token?.kind === 'prompt' && token.error).toMatch(error);
  });

  it('PC-3 a valid reference has no error; a 128-character id is valid', () => {
    const id = `${'a'.repeat(126)}.-`;
    expect(tokenize(`{{prompt:${id}|mode=template}}`)).toEqual([
      { kind: 'prompt', promptId: id, mode: 'template', raw: `{{prompt:${id}|mode=template}}`, start: 0 },
    ]);
  });

  it('EX-3 merges adjacent literal text into one token', () => {
    expect(tokenize('a{ b}{1}{{c d}}}')).toEqual([text('a{ b}{1}{{c d}}}')]);
  });

  it('EX-3 scans long brace runs in linear time', () => {
    for (const unit of ['{{prompt:a', '{{foundationallm:x:', '{{a', '{a', '{'])
      expect(tokenize(unit.repeat(40_000)).map(tokenText).join('')).toBe(unit.repeat(40_000));
  });
});

describe('AG-4 placeholderNames', () => {
  it('AG-4 lists distinct {name} tokens in order of first appearance, ignoring other braces', () => {
    expect(placeholderNames('{b} {a} {b} {{c}} {{prompt:d}} {e_f} { g } {H1}')).toEqual(['b', 'a', 'H1']);
    expect(placeholderNames('Reference text:\n{context}\n\nQuestion: {question}')).toEqual([
      'context',
      'question',
    ]);
  });
});

describe('EX-3 render', () => {
  it('EX-3 replaces each token once; undefined leaves the original text', () => {
    const tokens = tokenize('{a} {b} {{prompt:p|mode=execute}} {{foundationallm:v:HH}} {{d}} {{prompt:}}');
    expect(render(tokens, {})).toBe(
      '{a} {b} {{prompt:p|mode=execute}} {{foundationallm:v:HH}} {{d}} {{prompt:}}',
    );
    expect(
      render(tokens, {
        placeholder: (n) => (n === 'a' ? 'A' : undefined),
        prompt: (t) => (t.error ? undefined : `<${t.promptId}:${t.mode}>`),
        variable: (t) => `<${t.variable}|${t.format}>`,
        double: (t) => `<${t.name}>`,
      }),
    ).toBe('A {b} <p:execute> <v|HH> <d> {{prompt:}}');
  });

  it('EX-3 inserted text is never scanned again', () => {
    const tokens = tokenize('{a}{b}');
    const values: Record<string, string> = { a: '{b}', b: '{{prompt:y}}{{foundationallm:z}}{a}' };
    expect(render(tokens, { placeholder: (n) => values[n] })).toBe('{b}{{prompt:y}}{{foundationallm:z}}{a}');
    expect(render(tokenize('{{prompt:x}}'), { prompt: () => '{question} {{prompt:x}}' })).toBe(
      '{question} {{prompt:x}}',
    );
    expect(render(tokenize('{q}'), { placeholder: () => '$& $1 $$' })).toBe('$& $1 $$');
  });
});

// ---- properties ----

const NAMES = ['a', 'b', 'question', 'Q1', 'context', 'constructor'];
const name = fc.constantFrom(...NAMES);
const nasty = fc.oneof(
  fc.string(),
  fc.constantFrom('{x}', '{{prompt:y}}', '{{foundationallm:z}}', '{', '}', '{a}', '{question}', '$&', '$1'),
);
const adversarial = fc.array(nasty, { maxLength: 4 }).map((parts) => parts.join(''));
const literal = fc.string({
  unit: fc.constantFrom('a', 'Z', '1', '_', ':', '|', '=', ' ', '\n', '{', '}', '"', 'é', '😀'),
  maxLength: 8,
});
const doubleBraceForm = fc.constantFrom(
  '{{prompt:abc}}',
  '{{prompt:abc|mode=execute}}',
  '{{prompt:abc|x=1}}',
  '{{prompt:}}',
  '{{foundationallm:current_datetime_utc:HH:mm:ss}}',
  '{{foundationallm:tool_list}}',
  '{{question}}',
  '{{a}}',
);
const literalBraces = fc.constantFrom('{', '}', '{{', '}}', '{ }', '{"a":1}', '{a_b}', '{1}');
// Fragments that combine with their neighbours into near-misses and nested forms.
const partial = fc.constantFrom(
  '{{prompt:',
  '{{foundationallm:',
  'foundationallm:x',
  'prompt:abc',
  ':HH:mm',
  '|mode=auto',
  'question',
  '_1',
);
const template = fc
  .array(
    fc.oneof(
      literal,
      name.map((n) => `{${n}}`),
      literalBraces,
      doubleBraceForm,
      partial,
    ),
    {
      maxLength: 12,
    },
  )
  .map((pieces) => pieces.join(''));
const values = fc
  .array(fc.tuple(name, adversarial), { maxLength: NAMES.length })
  .map((entries) => new Map(entries));

describe('EX-3 properties', () => {
  it('EX-3 render equals the regex reference on the original template', () => {
    fc.assert(
      fc.property(template, values, (t, v) => {
        expect(render(tokenize(t), { placeholder: (n) => v.get(n) })).toBe(referenceRender(t, v));
        expect(placeholderNames(t)).toEqual([...new Set(referencePlaceholders(t))]);
      }),
      { numRuns: 2000 },
    );
  });

  it('EX-3 tokens cover the template exactly, each at its start offset', () => {
    fc.assert(
      fc.property(template, (t) => {
        const tokens = tokenize(t);
        expect(tokens.map(tokenText).join('')).toBe(t);
        expect(render(tokens, {})).toBe(t);
        let offset = 0;
        for (const token of tokens) {
          if (token.kind !== 'text') expect(token.start).toBe(offset);
          else expect(token.text).not.toBe('');
          offset += tokenText(token).length;
        }
        tokens
          .slice(1)
          .forEach((token, i) => expect(token.kind === 'text' && tokens[i]!.kind === 'text').toBe(false));
      }),
      { numRuns: 1000 },
    );
  });

  it('EX-3 no value is ever expanded: the output is the pieces with each value verbatim', () => {
    // Pieces that cannot merge into other tokens when concatenated (text has no braces).
    const piece = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', ' ', ':', '|', '\n', '$'), maxLength: 5 }),
      name.map((n) => `{${n}}`),
      fc.constantFrom('{{prompt:abc}}', '{{prompt:x|mode=auto}}', '{{foundationallm:tool_list}}', '{{q_1}}'),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 10 }), adversarial, (pieces, seed) => {
        const valueOf = (src: string) => (src.startsWith('{') ? `${seed}<${src}>${seed}` : undefined);
        const out = render(tokenize(pieces.join('')), {
          placeholder: (n) => valueOf(`{${n}}`),
          prompt: (t) => valueOf(t.raw),
          variable: (t) => valueOf(t.raw),
          double: (t) => valueOf(t.raw),
        });
        expect(out).toBe(pieces.map((p) => valueOf(p) ?? p).join(''));
        for (const p of pieces) if (valueOf(p) !== undefined) expect(out).toContain(valueOf(p));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('EX-4 findPlaceholderLike', () => {
  it.each([
    ['no braces', undefined],
    ['{ } {"a":1} {a_b} {1} {} {é}', undefined],
    ['answer {id} and {x}', '{id}'],
    ['x{Name2}y', '{Name2}'],
    ['{{id}}', '{id}'],
    ['{{prompt:x}} {{foundationallm:y}}', undefined],
    ['{a_b}{c}', '{c}'],
    ['{{{a', undefined],
  ])('EX-4 %j → %j', (rendered, expected) => {
    expect(findPlaceholderLike(rendered)).toBe(expected);
  });

  it('EX-4 agrees with a regex reference', () => {
    const noisy = fc.oneof(
      fc.string(),
      fc.string({ unit: fc.constantFrom('{', '}', 'a', 'Z', '1', '_', ' ', 'é'), maxLength: 20 }),
    );
    fc.assert(
      fc.property(noisy, (s) => {
        expect(findPlaceholderLike(s)).toBe(referencePlaceholderLike(s));
      }),
      { numRuns: 3000 },
    );
  });
});
