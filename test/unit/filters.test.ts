// SPEC §6 Filters (FL) and §18 (filters depth 8): parsing, errors, SQL shape and parameterisation.
// The semantics against a real PostgreSQL are in test/integration/filter-compiler.test.ts.
import fc from 'fast-check';
import { InvalidInput } from '../../domain/errors';
import { compileFilter } from '../../domain/filter-compiler';
import { parseFilter } from '../../domain/filter-parser';
import type { FilterNode } from '../../domain/filters';
import { evaluateFilter } from '../helpers/filter-reference';

function invalid(filter: unknown, maxDepth?: number): string {
  try {
    parseFilter(filter, maxDepth);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInput);
    return (err as InvalidInput).message;
  }
  throw new Error(`expected InvalidInput for ${JSON.stringify(filter)}`);
}

/** `{"$not": ...}` nested so that the innermost filter is at depth `depth`. */
function nestedNot(depth: number): unknown {
  let f: unknown = { a: 1 };
  for (let i = 1; i < depth; i++) f = { $not: f };
  return f;
}

describe('FL parseFilter', () => {
  it('FL {"field": value} is $eq; several keys are ANDed; {} matches everything', () => {
    expect(parseFilter({ a: 1 })).toEqual({ op: 'eq', path: ['a'], value: 1 });
    expect(parseFilter({ a: 'x', b: null })).toEqual({
      op: 'and',
      children: [
        { op: 'eq', path: ['a'], value: 'x' },
        { op: 'eq', path: ['b'], value: null },
      ],
    });
    expect(parseFilter({})).toEqual({ op: 'and', children: [] });
  });

  it('FL dotted paths, every operator, and several operators on one field', () => {
    const node = parseFilter({
      'a.b.c': { $gte: 1, $lt: 5 },
      s: { $in: ['x', 1, null], $nin: [], $between: ['a', 'm'] },
      e: { $exists: false, $like: 'a%', $ilike: 'A\\_%', $contains: true, $eq: false, $ne: 'z' },
    });
    expect(node).toEqual({
      op: 'and',
      children: [
        { op: 'gte', path: ['a', 'b', 'c'], value: 1 },
        { op: 'lt', path: ['a', 'b', 'c'], value: 5 },
        { op: 'in', path: ['s'], values: ['x', 1, null] },
        { op: 'nin', path: ['s'], values: [] },
        { op: 'between', path: ['s'], lo: 'a', hi: 'm' },
        { op: 'exists', path: ['e'], value: false },
        { op: 'like', path: ['e'], pattern: 'a%' },
        { op: 'ilike', path: ['e'], pattern: 'A\\_%' },
        { op: 'contains', path: ['e'], value: true },
        { op: 'eq', path: ['e'], value: false },
        { op: 'ne', path: ['e'], value: 'z' },
      ],
    });
  });

  it('FL logical operators $and, $or, $not', () => {
    expect(parseFilter({ $or: [{ a: 1 }, { $not: { b: { $gt: 2 } } }], $and: [{ c: true }] })).toEqual({
      op: 'and',
      children: [
        {
          op: 'or',
          children: [
            { op: 'eq', path: ['a'], value: 1 },
            { op: 'not', child: { op: 'gt', path: ['b'], value: 2 } },
          ],
        },
        { op: 'and', children: [{ op: 'eq', path: ['c'], value: true }] },
      ],
    });
  });

  it('FL malformed filters → InvalidInput naming the problem', () => {
    const cases: [unknown, RegExp][] = [
      [null, /filter must be a JSON object, not null/],
      [[{ a: 1 }], /filter must be a JSON object, not a list/],
      ['a = 1', /filter must be a JSON object, not string/],
      [{ $foo: 1 }, /Unknown filter operator: "\$foo"/],
      [{ a: { $foo: 1 } }, /Unknown filter operator: "\$foo"/],
      [{ a: { $regex: '.*' } }, /Unknown filter operator: "\$regex"/],
      [{ $eq: 1 }, /operator \$eq must be applied to a field/],
      [{ a: { $in: 'x' } }, /"a": \$in must be a list of scalars, not string/],
      [{ a: { $nin: { x: 1 } } }, /"a": \$nin must be a list of scalars, not an object/],
      [{ a: { $in: [1, [2]] } }, /"a": \$in\[1\] must be a string, number, boolean or null, not a list/],
      [{ a: { $between: [1] } }, /"a": \$between must be a list \[low, high\]/],
      [{ a: { $between: [1, 2, 3] } }, /"a": \$between must be a list/],
      [{ a: { $between: 5 } }, /"a": \$between must be a list/],
      [{ a: { $between: [1, 'z'] } }, /"a": \$between bounds must have the same type, not number and string/],
      [{ a: { $between: [true, false] } }, /"a": \$between\[0\] must be a number or a string, not boolean/],
      [{ a: { $between: [null, 1] } }, /\$between\[0\] must be a number or a string, not null/],
      [{ $and: { a: 1 } }, /\$and must be a non-empty list of filters, not an object/],
      [{ $and: [] }, /\$and must be a non-empty list/],
      [{ $or: 'a' }, /\$or must be a non-empty list of filters, not string/],
      [{ $or: [{ a: 1 }, 3] }, /filter\.\$or\[1\] must be a JSON object, not number/],
      [{ $not: [{ a: 1 }] }, /\$not must be a filter object, not a list/],
      [{ $not: true }, /\$not must be a filter object, not boolean/],
      [{ a: { $exists: 'yes' } }, /"a": \$exists must be true or false, not string/],
      [{ a: { $like: 5 } }, /"a": \$like must be a string pattern, not number/],
      [{ a: { $ilike: null } }, /"a": \$ilike must be a string pattern, not null/],
      [{ a: { $like: 'abc\\' } }, /"a": \$like pattern must not end with a lone escape/],
      [{ a: { $like: '\\\\\\' } }, /must not end with a lone escape/],
      [{ '': 1 }, /Filter field name must not be empty/],
      [{ 'a..b': 1 }, /Filter field "a..b" has an empty path segment/],
      [{ '.a': 1 }, /Filter field ".a" has an empty path segment/],
      [{ 'a.': 1 }, /Filter field "a." has an empty path segment/],
      [{ a: { $gt: 1, b: 2 } }, /Filter field "a": operator object mixes operators and plain keys \("b"\)/],
      [
        { a: { b: 2 } },
        /Filter field "a": a value must be a scalar or an operator object; use a dotted path \("a.b"\)/,
      ],
      [{ a: {} }, /Filter field "a": empty operator object/],
      [{ a: [1, 2] }, /Filter field "a": value must be .* not a list \(use \$in or \$contains\)/],
      [{ a: { $eq: [1] } }, /"a": \$eq must be .* not a list/],
      [{ a: { $ne: {} } }, /"a": \$ne must be .* not an object/],
      [{ a: { $gt: true } }, /"a": \$gt must be a number or a string, not boolean/],
      [{ a: { $lte: null } }, /"a": \$lte must be a number or a string, not null/],
      [{ a: { $contains: [1] } }, /"a": \$contains must be a string, number, boolean or null, not a list/],
      [{ a: Number.NaN }, /"a": value must be .* not number/],
      [{ a: { $gt: Infinity } }, /"a": \$gt must be a number or a string, not number/],
      [{ a: undefined }, /"a": value must be .* not undefined/],
      [{ a: 'x\u0000y' }, /"a": value contains U\+0000/],
      [{ a: { $like: '\ud800' } }, /"a": \$like contains U\+0000 or an unpaired surrogate/],
      [{ 'a\udc00': 1 }, /unpaired surrogate/],
      [{ a: { $not: { $eq: 1 } } }, /"a": \$not is a logical operator; use it at filter level/],
      [{ a: { $or: [] } }, /"a": \$or is a logical operator/],
    ];
    for (const [filter, message] of cases) expect(invalid(filter)).toMatch(message);
  });

  it('FL a pattern may end with an escaped backslash', () => {
    expect(parseFilter({ a: { $like: 'x\\\\' } })).toEqual({ op: 'like', path: ['a'], pattern: 'x\\\\' });
  });

  it('§18 filters depth 8: depth 8 is accepted, depth 9 → InvalidInput naming the limit', () => {
    expect(() => parseFilter(nestedNot(8))).not.toThrow();
    expect(invalid(nestedNot(9))).toMatch(/Filter depth exceeds the limit of 8/);
    expect(invalid({ $and: [{ $or: [{ $not: { a: 1 } }] }] }, 3)).toMatch(
      /limit of 3 \(at filter\.\$and\[0\]\.\$or\[0\]\.\$not\)/,
    );
    expect(() => parseFilter({ $and: [{ $or: [{ a: 1 }] }] }, 3)).not.toThrow();
    // A deeply nested attack stops at the limit instead of recursing through it.
    expect(invalid(nestedNot(100_000))).toMatch(/limit of 8/);
  });
});

describe('FL compileFilter', () => {
  it('FL the empty filter compiles to TRUE with no bindings', () => {
    expect(compileFilter(parseFilter({}), 'f.metadata')).toEqual({ sql: 'TRUE', bindings: [] });
  });

  it('FL field paths and values are bindings; the column is used as given', () => {
    const { sql, bindings } = compileFilter(parseFilter({ 'a.b': 'x', n: { $gt: 3 } }), 'f.metadata');
    expect(sql).toBe(
      '((COALESCE(((f.metadata) -> (?::text) -> (?::text)) = (?::jsonb), false) AND (f.metadata) @> (?::jsonb)) AND ' +
        "COALESCE(jsonb_typeof((f.metadata) -> (?::text)) = 'number' AND ((f.metadata) -> (?::text)) > (?::jsonb), false))",
    );
    // Equality also as the containment it implies, which the metadata's GIN index answers.
    expect(bindings).toEqual(['a', 'b', '"x"', '{"a":{"b":"x"}}', 'n', 'n', '3']);
  });

  it('FL the number of ? placeholders equals the number of bindings, for every operator', () => {
    const filter = {
      a: 1,
      b: { $ne: null, $lt: 'x', $lte: 2, $gt: 'y', $gte: 3 },
      c: { $in: [1, 'a'], $nin: [null], $between: [1, 2], $exists: true },
      d: { $like: '%', $ilike: '_', $contains: 'z' },
      e: { $contains: 5, $exists: false },
      $or: [{ f: 1 }, { $not: { g: 2 } }],
    };
    const { sql, bindings } = compileFilter(parseFilter(filter), 'm');
    expect(sql.split('?').length - 1).toBe(bindings.length);
    expect(bindings.every((b) => typeof b === 'string')).toBe(true);
  });

  // Arbitraries with hostile text: quotes, `$`, `;`, `--`, backslashes, unicode, and a marker
  // (§) that never occurs in the SQL this module writes.
  const hostile = fc.string({
    unit: fc.constantFrom(
      "'",
      '"',
      '$',
      ';',
      '--',
      '\\',
      '/*',
      '*/',
      '?',
      '??',
      ':',
      '§',
      'a',
      'Z',
      'é',
      '😀',
      ' ',
      ')',
      '(',
    ),
    minLength: 1,
    maxLength: 8,
  });
  const segment = hostile.map((s) => `§${s.replace(/\./g, '')}`);
  const field = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('.'));
  const str = hostile.map((s) => `§${s}`);
  const scalar = fc.oneof(
    str,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
  );
  const pattern = str.map((s) => s.replace(/\\+$/, ''));
  const leaf = fc.oneof(
    fc.record({ f: field, v: scalar }).map(({ f, v }) => ({ [f]: v })),
    fc
      .record({ f: field, op: fc.constantFrom('$eq', '$ne', '$contains'), v: scalar })
      .map(({ f, op, v }) => ({ [f]: { [op]: v } })),
    fc
      .record({ f: field, op: fc.constantFrom('$lt', '$lte', '$gt', '$gte'), v: fc.oneof(str, fc.integer()) })
      .map(({ f, op, v }) => ({ [f]: { [op]: v } })),
    fc
      .record({ f: field, op: fc.constantFrom('$in', '$nin'), v: fc.array(scalar, { maxLength: 3 }) })
      .map(({ f, op, v }) => ({ [f]: { [op]: v } })),
    fc.record({ f: field, lo: str, hi: str }).map(({ f, lo, hi }) => ({ [f]: { $between: [lo, hi] } })),
    fc.record({ f: field, v: fc.boolean() }).map(({ f, v }) => ({ [f]: { $exists: v } })),
    fc
      .record({ f: field, op: fc.constantFrom('$like', '$ilike'), v: pattern })
      .map(({ f, op, v }) => ({ [f]: { [op]: v } })),
  );
  const filterArb: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ filter: Record<string, unknown> }>(
    (tie) => ({
      filter: fc.oneof(
        { maxDepth: 4 },
        leaf,
        fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((fs) => ({ $and: fs })),
        fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((fs) => ({ $or: fs })),
        tie('filter').map((f) => ({ $not: f })),
      ),
    }),
  ).filter;

  /** The same filter with every field segment and string value replaced by a constant. */
  function blank(f: unknown): unknown {
    if (Array.isArray(f)) return f.map(blank);
    if (typeof f === 'string') return 's';
    if (typeof f === 'number') return 0;
    if (typeof f === 'boolean' || f === null) return f;
    return Object.fromEntries(
      Object.entries(f as Record<string, unknown>).map(([k, v]) => [
        k.startsWith('$') ? k : k.replace(/[^.]+/g, 'k'),
        k === '$between' && Array.isArray(v) && typeof v[0] === 'string' ? ['s', 's'] : blank(v),
      ]),
    );
  }

  it('FL no text of a filter reaches the SQL: field names and values travel as bindings only', () => {
    fc.assert(
      fc.property(filterArb, (filter) => {
        const { sql, bindings } = compileFilter(parseFilter(filter), 'f.metadata');
        // No marker, no statement separator, no comment, no dollar quoting, no stray quote.
        const withoutConstants = sql.replace(/'(?:number|string|array|\{\})'|COLLATE "C"/g, '');
        expect(withoutConstants).not.toMatch(/[§;$"']|--|\/\*/);
        // The SQL depends only on the shape of the filter, not on its text or values.
        const shape = compileFilter(parseFilter(blank(filter)), 'f.metadata');
        expect(sql).toBe(shape.sql);
        expect(bindings).toHaveLength(shape.bindings.length);
        expect(sql.split('?').length - 1).toBe(bindings.length);
      }),
      { numRuns: 500 },
    );
  });

  it('FL every compiled node is wrapped so that NULL cannot leak (missing fields)', () => {
    // Equality: the guarded leaf AND a containment of a NOT NULL column (never NULL either).
    expect(compileFilter({ op: 'eq', path: ['a'], value: 1 }, 'm').sql).toMatch(
      /^\(COALESCE\(.*, false\) AND \(m\) @> \(\?::jsonb\)\)$/,
    );
    const leaves: FilterNode[] = [
      { op: 'lt', path: ['a'], value: 1 },
      { op: 'lt', path: ['a'], value: 'x' },
      { op: 'in', path: ['a'], values: [1] },
      { op: 'like', path: ['a'], pattern: 'x' },
      { op: 'ilike', path: ['a'], pattern: 'x' },
      { op: 'contains', path: ['a'], value: 'x' },
      { op: 'contains', path: ['a'], value: 1 },
    ];
    for (const leaf of leaves) expect(compileFilter(leaf, 'm').sql).toMatch(/^COALESCE\(.*, false\)$/);
    expect(compileFilter({ op: 'exists', path: ['a'], value: true }, 'm').sql).toMatch(/IS NOT NULL\)$/);
  });
});

describe('FL reference evaluator (hand-computed, the oracle of the integration test)', () => {
  const doc = {
    n: 5,
    f: 2.5,
    s: 'Hello',
    b: true,
    z: null,
    tags: ['a', 1, null, ['x']],
    o: { p: { q: 'deep' }, arr: [{ k: 1 }] },
    astral: '😀',
    bmp: '\uffff',
  };
  const cases: [unknown, boolean][] = [
    [{}, true],
    [{ n: 5 }, true],
    [{ n: '5' }, false],
    [{ n: { $gt: '4' } }, false],
    [{ n: { $ne: '5' } }, true],
    [{ missing: { $ne: 1 } }, true],
    [{ missing: { $nin: [1] } }, true],
    [{ missing: { $eq: null } }, false],
    [{ missing: null }, false],
    [{ z: null }, true],
    [{ z: { $exists: true } }, true],
    [{ missing: { $exists: false } }, true],
    [{ missing: { $lt: 1 } }, false],
    [{ $not: { missing: { $lt: 1 } } }, true],
    [{ n: { $between: [5, 6] } }, true],
    [{ f: { $between: [2.6, 3] } }, false],
    [{ s: { $between: ['H', 'I'] } }, true],
    [{ s: { $gt: 'hello' } }, false], // 'H' (U+0048) < 'h' (U+0068)
    [{ astral: { $gt: '\uffff' } }, true], // code points: U+1F600 > U+FFFF (UTF-16 units say the opposite)
    [{ bmp: { $lt: '😀' } }, true],
    [{ b: { $in: [true] } }, true],
    [{ b: { $in: ['true', 1] } }, false],
    [{ tags: { $contains: 'a' } }, true],
    [{ tags: { $contains: null } }, true],
    [{ tags: { $contains: 'x' } }, false], // not a top-level element
    [{ tags: { $contains: '1' } }, false],
    [{ s: { $contains: 'ell' } }, true],
    [{ s: { $contains: '' } }, true],
    [{ n: { $contains: 5 } }, false],
    [{ s: { $like: 'H%o' } }, true],
    [{ s: { $like: 'h%' } }, false],
    [{ s: { $ilike: 'h_LLO' } }, true],
    [{ s: { $like: 'Hell\\_' } }, false],
    [{ n: { $like: '5' } }, false],
    [{ astral: { $like: '_' } }, true], // one code point
    [{ 'o.p.q': 'deep' }, true],
    [{ 'o.arr.0.k': 1 }, false], // paths walk object keys only
    [{ 'tags.0': 'a' }, false],
    [{ 's.length': 5 }, false],
    [{ $or: [{ n: 1 }, { s: 'Hello' }] }, true],
    [{ $and: [{ n: 5 }, { s: 'x' }] }, false],
    [{ n: 5, s: 'x' }, false],
    [{ n: { $gte: 5, $lt: 6 } }, true],
  ];
  it.each(cases.map(([filter, expected]) => ({ text: JSON.stringify(filter), filter, expected })))(
    'FL $text → $expected',
    ({ filter, expected }) => {
      parseFilter(filter); // every case is a valid filter
      expect(evaluateFilter(filter, doc)).toBe(expected);
    },
  );
});
