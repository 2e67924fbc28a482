// SPEC §4 CL-1 (classification hierarchies) and CL-2 (reader classification sets).
import { buildClosure, resolveReader, type ClassificationLevel } from '../../domain/classifications';
import { InvalidInput } from '../../domain/errors';

function invalid(fn: () => unknown): InvalidInput {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInput);
    return err as InvalidInput;
  }
  throw new Error('expected InvalidInput');
}

describe('CL-1 buildClosure', () => {
  it('CL-1 the SPEC example: internal includes public', () => {
    expect(buildClosure([{ name: 'internal', includes: ['public'] }, { name: 'public' }])).toEqual({
      internal: ['internal', 'public'],
      public: ['public'],
    });
  });

  it('CL-1 closure is transitive and sorted (chain secret → confidential → internal → public)', () => {
    const closure = buildClosure([
      { name: 'secret', includes: ['confidential'] },
      { name: 'public' },
      { name: 'confidential', includes: ['internal'] },
      { name: 'internal', includes: ['public'] },
    ]);
    expect(closure).toEqual({
      secret: ['confidential', 'internal', 'public', 'secret'],
      confidential: ['confidential', 'internal', 'public'],
      internal: ['internal', 'public'],
      public: ['public'],
    });
  });

  it('CL-1 a DAG where two levels share an include, and one level includes several', () => {
    //        exec
    //       /    \
    //     hr    finance
    //       \    /
    //      internal
    //         |
    //       public
    const closure = buildClosure([
      { name: 'exec', includes: ['hr', 'finance'] },
      { name: 'hr', includes: ['internal'] },
      { name: 'finance', includes: ['internal'] },
      { name: 'internal', includes: ['public'] },
      { name: 'public', includes: [] },
      { name: 'legal' },
    ]);
    expect(closure).toEqual({
      exec: ['exec', 'finance', 'hr', 'internal', 'public'],
      hr: ['hr', 'internal', 'public'],
      finance: ['finance', 'internal', 'public'],
      internal: ['internal', 'public'],
      public: ['public'],
      legal: ['legal'],
    });
  });

  it('CL-1 a level may include a level and also one of its descendants (diamond shortcut)', () => {
    expect(
      buildClosure([{ name: 'a', includes: ['b', 'c'] }, { name: 'b', includes: ['c'] }, { name: 'c' }]),
    ).toEqual({ a: ['a', 'b', 'c'], b: ['b', 'c'], c: ['c'] });
  });

  it('CL-1 names such as "constructor" are ordinary levels', () => {
    expect(buildClosure([{ name: 'constructor', includes: ['toString'] }, { name: 'toString' }])).toEqual({
      constructor: ['constructor', 'toString'],
      toString: ['toString'],
    });
  });

  it('CL-1 a cycle of length 1 (a level including itself) → 400 naming it', () => {
    expect(invalid(() => buildClosure([{ name: 'a', includes: ['a'] }])).message).toBe(
      'Classification cycle: a → a (a level may not include itself)',
    );
  });

  it('CL-1 a cycle of length 2 → 400 naming the levels on it', () => {
    expect(
      invalid(() =>
        buildClosure([{ name: 'top' }, { name: 'a', includes: ['b'] }, { name: 'b', includes: ['a'] }]),
      ).message,
    ).toBe('Classification cycle: a → b → a');
  });

  it('CL-1 a cycle of length 3 reached from outside → 400 naming only the levels on it', () => {
    expect(
      invalid(() =>
        buildClosure([
          { name: 'root', includes: ['x'] },
          { name: 'x', includes: ['y'] },
          { name: 'y', includes: ['z', 'public'] },
          { name: 'z', includes: ['x'] },
          { name: 'public' },
        ]),
      ).message,
    ).toBe('Classification cycle: x → y → z → x');
  });

  it('CL-1 an include that is not declared → 400 naming it', () => {
    expect(invalid(() => buildClosure([{ name: 'internal', includes: ['public'] }])).message).toBe(
      'Classification level internal includes an undeclared level: public',
    );
  });

  it('CL-1 duplicate level → 400 naming it', () => {
    expect(invalid(() => buildClosure([{ name: 'a' }, { name: 'b' }, { name: 'a' }])).message).toBe(
      'Duplicate classification level: a',
    );
  });

  it('CL-1 empty list, bad names and malformed levels → 400', () => {
    expect(invalid(() => buildClosure([])).message).toMatch(/non-empty/);
    expect(invalid(() => buildClosure(null as unknown as ClassificationLevel[])).message).toMatch(
      /non-empty/,
    );
    expect(invalid(() => buildClosure([{ name: '' }])).message).toMatch(/classifications\[0\]\.name ""/);
    expect(invalid(() => buildClosure([{ name: '-x' }])).message).toMatch(/"-x" is not a valid/);
    expect(invalid(() => buildClosure([{ name: 'a b' }])).message).toMatch(/"a b" is not a valid/);
    expect(invalid(() => buildClosure([{ name: 'x'.repeat(65) }])).message).toMatch(/not a valid/);
    expect(buildClosure([{ name: `A${'x'.repeat(63)}` }, { name: 'v1.2:a_b-c' }])).toBeDefined();
    expect(invalid(() => buildClosure([{ name: 7 } as unknown as ClassificationLevel])).message).toMatch(
      /classifications\[0\]\.name must be a string, not number/,
    );
    expect(invalid(() => buildClosure(['a'] as unknown as ClassificationLevel[])).message).toMatch(
      /classifications\[0\] must be an object/,
    );
    expect(
      invalid(() => buildClosure([{ name: 'a', includes: 'b' } as unknown as ClassificationLevel])).message,
    ).toMatch(/a: includes must be a list/);
    expect(
      invalid(() => buildClosure([{ name: 'a', include: ['b'] } as unknown as ClassificationLevel])).message,
    ).toBe('Classification level a: unknown field "include"');
    expect(
      invalid(() => buildClosure([{ name: 'a', includes: [3] } as unknown as ClassificationLevel])).message,
    ).toMatch(/a: includes\[0\] must be a string/);
  });
});

describe('CL-2 resolveReader', () => {
  const closure = buildClosure([
    { name: 'exec', includes: ['hr', 'finance'] },
    { name: 'hr', includes: ['internal'] },
    { name: 'finance', includes: ['internal'] },
    { name: 'internal', includes: ['public'] },
    { name: 'public' },
    { name: 'legal' },
  ]);

  it('CL-2 a string is hierarchical', () => {
    expect(resolveReader('hr', closure)).toEqual(['hr', 'internal', 'public']);
    expect(resolveReader('public', closure)).toEqual(['public']);
  });

  it('CL-2 {name, exact: true} is that level only', () => {
    expect(resolveReader({ name: 'hr', exact: true }, closure)).toEqual(['hr']);
  });

  it('CL-2 {name} and {name, exact: false} are hierarchical', () => {
    expect(resolveReader({ name: 'hr' }, closure)).toEqual(['hr', 'internal', 'public']);
    expect(resolveReader({ name: 'exec', exact: false }, closure)).toEqual([
      'exec',
      'finance',
      'hr',
      'internal',
      'public',
    ]);
  });

  it('CL-2 a list is the union of its items, sorted and distinct', () => {
    expect(resolveReader(['hr', 'legal'], closure)).toEqual(['hr', 'internal', 'legal', 'public']);
    expect(resolveReader(['hr', 'finance', 'internal'], closure)).toEqual([
      'finance',
      'hr',
      'internal',
      'public',
    ]);
    expect(resolveReader([{ name: 'exec', exact: true }, 'legal', { name: 'internal' }], closure)).toEqual([
      'exec',
      'internal',
      'legal',
      'public',
    ]);
    expect(resolveReader(['public', 'public'], closure)).toEqual(['public']);
  });

  it('CL-2 [] means no access', () => {
    expect(resolveReader([], closure)).toEqual([]);
  });

  it('CL-2 an unknown level → 400 naming it, in every form', () => {
    for (const reader of ['nope', { name: 'nope' }, { name: 'nope', exact: true }, ['hr', 'nope']])
      expect(invalid(() => resolveReader(reader, closure)).message).toBe(
        'Unknown classification level: nope',
      );
    // Object.prototype members are not levels.
    expect(invalid(() => resolveReader('toString', closure)).message).toBe(
      'Unknown classification level: toString',
    );
  });

  it('CL-2 malformed readers → 400 naming the problem', () => {
    const cases: [unknown, RegExp][] = [
      [7, /classification must be a level name.*not number/],
      [null, /classification must be a level name.*not null/],
      [true, /not boolean/],
      ['', /classification must not be empty/],
      [{}, /classification: name is required/],
      [{ name: 'hr', exact: 'yes' }, /classification: exact must be true or false, not string/],
      [{ name: 'hr', level: 1 }, /classification: unknown field "level"/],
      [{ name: 3 }, /classification\.name must be a level name/],
      [['hr', ['legal']], /classification\[1\]: classification lists cannot be nested/],
      [['hr', 5], /classification\[1\] must be a level name.*not number/],
      [['hr', ''], /classification\[1\] must not be empty/],
      [[{ name: 'hr', exact: 1 }], /classification\[0\]: exact must be true or false/],
    ];
    for (const [reader, message] of cases)
      expect(invalid(() => resolveReader(reader, closure)).message).toMatch(message);
  });
});
