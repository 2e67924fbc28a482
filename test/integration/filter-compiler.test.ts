// SPEC §6 Filters (FL): the SQL that domain/filters.ts compiles, run by a real PostgreSQL over
// random metadata documents, selects exactly the documents that the independent in-memory
// evaluator (test/helpers/filter-reference.ts) accepts, for random filters over the whole
// language (nesting, missing fields, cross-type comparisons, unicode, quotes, LIKE escapes).
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import knex, { type Knex } from 'knex';
import { Client } from 'pg';
import { compileFilter } from '../../domain/filter-compiler';
import { parseFilter } from '../../domain/filter-parser';
import { evaluateFilter } from '../helpers/filter-reference';
import { ADMIN_DATABASE_URL, databaseUrl } from '../helpers/services';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const DATABASE = `agentry_fc_${randomBytes(6).toString('hex')}`;
const DOCS_SEED = Number(process.env.FC_DOCS_SEED ?? Math.floor(Math.random() * 2 ** 31));

async function admin(sql: string): Promise<void> {
  const client = new Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Vocabulary: small, so that filters and documents meet often.

const STRINGS = [
  '',
  'a',
  'A',
  'abc',
  'ABC',
  'Abc',
  'b',
  'ä',
  'Ä',
  'ß',
  '😀',
  'a😀',
  '😀a',
  '\uffff',
  '\ue000',
  "it's",
  '"q"',
  "'; DROP TABLE docs; --",
  '%',
  '_',
  '\\',
  'a%b',
  'a_b',
  'x\\y',
  '5',
  'true',
  'null',
  ' ',
  '$eq',
];
const noNul = (s: string) => !s.includes('\u0000');

const str: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }).filter(noNul) },
);
const num: fc.Arbitrary<number> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -3, max: 3 }) },
  { weight: 2, arbitrary: fc.constantFrom(0.5, -0.5, 2.5, 1e21, -1e-7, 123456789.125) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);
const scalar: fc.Arbitrary<Json> = fc.oneof(
  { weight: 4, arbitrary: str },
  { weight: 4, arbitrary: num },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
);

/** Any JSON value, nested objects and arrays included. */
const value: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 3, depthSize: 'small' },
    scalar,
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom('a', 'n', 'p', 'q', 'arr', 'y'), tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** An object whose keys are each present or absent. */
const optional = (shape: Record<string, fc.Arbitrary<Json>>): fc.Arbitrary<{ [key: string]: Json }> =>
  fc.record(shape, { requiredKeys: [] }) as fc.Arbitrary<{ [key: string]: Json }>;

/** Each key usually holds a value of its own type, and sometimes anything (cross-type cases). */
const usually = (natural: fc.Arbitrary<Json>): fc.Arbitrary<Json> =>
  fc.oneof({ weight: 5, arbitrary: natural }, { weight: 1, arbitrary: value });

const doc = optional({
  a: usually(str),
  s: usually(str),
  n: usually(num),
  ключ: usually(str),
  "it's": usually(scalar),
  '😀': usually(str),
  'x.y': usually(str),
  tags: usually(fc.array(scalar, { maxLength: 4 })),
  o: usually(
    optional({
      a: usually(str),
      n: usually(num),
      p: usually(optional({ q: usually(str) })),
      arr: usually(fc.array(scalar, { maxLength: 3 })),
    }),
  ),
  x: usually(optional({ y: fc.oneof(str, num, optional({ q: usually(str) })) })),
});

// ---------------------------------------------------------------------------------------------
// Filters over the whole language.

const path = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'a',
      'n',
      's',
      'tags',
      'ключ',
      "it's",
      '😀',
      'o.a',
      'o.n',
      'o.p.q',
      'o.arr',
      'x.y',
    ),
  },
  // whole objects, paths through arrays or scalars, keys containing a dot, missing fields
  {
    weight: 1,
    arbitrary: fc.constantFrom('o', 'o.p', 'x.y.q', 'tags.0', 'a.a', 'missing', 'o.missing.deep'),
  },
);
const ordered: fc.Arbitrary<string | number> = fc.oneof(str, num);
const pattern = fc
  .array(fc.constantFrom('%', '_', 'a', 'A', 'b', 'ä', 'Ä', 'ß', '😀', '\\%', '\\_', '\\\\', "'", '5', 'x'), {
    maxLength: 5,
  })
  .map((parts) => parts.join(''));

/** One operator and its argument, usually well typed, sometimes across types. */
const operator: fc.Arbitrary<[string, unknown]> = fc.oneof(
  fc.tuple(fc.constantFrom('$eq', '$ne', '$contains'), scalar),
  fc.tuple(fc.constantFrom('$lt', '$lte', '$gt', '$gte'), ordered),
  fc.tuple(fc.constantFrom('$in', '$nin'), fc.array(scalar, { maxLength: 4 })),
  fc.tuple(
    fc.constant('$between'),
    fc.oneof(
      fc.tuple(num, num).map(([x, y]) => [Math.min(x, y), Math.max(x, y)]),
      fc.tuple(str, str),
      fc.tuple(num, num),
    ),
  ),
  fc.tuple(fc.constant('$exists'), fc.boolean()),
  fc.tuple(fc.constantFrom('$like', '$ilike'), pattern),
);

const fieldFilter: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ p: path, v: scalar }).map(({ p, v }) => ({ [p]: v })) },
  {
    weight: 4,
    arbitrary: fc.record({ p: path, op: operator }).map(({ p, op: [op, arg] }) => ({ [p]: { [op]: arg } })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ p: path, ops: fc.array(operator, { minLength: 2, maxLength: 3 }) })
      .map(({ p, ops }) => ({ [p]: Object.fromEntries(ops) })),
  },
);

const filter: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ filter: Record<string, unknown> }>(
  (tie) => ({
    filter: fc.oneof(
      { maxDepth: 4, depthSize: 'small' },
      { weight: 4, arbitrary: fieldFilter },
      fc.constant({}),
      fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((fs) => ({ $and: fs })),
      fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((fs) => ({ $or: fs })),
      tie('filter').map((f) => ({ $not: f })),
      // Several keys at one level (fields and logical operators together), ANDed.
      fc.array(tie('filter'), { minLength: 2, maxLength: 3 }).map((fs) => Object.assign({}, ...fs)),
    ),
  }),
).filter;

// ---------------------------------------------------------------------------------------------

let db: Knex;
let docs: { id: number; metadata: Record<string, Json> }[];

beforeAll(async () => {
  await admin(`CREATE DATABASE ${DATABASE}`);
  db = knex({ client: 'pg', connection: databaseUrl(DATABASE), pool: { min: 0, max: 2 } });
  await db.raw('CREATE TABLE docs (id int PRIMARY KEY, metadata jsonb NOT NULL)');
  const fixed: Record<string, Json>[] = [
    {},
    { a: null, n: null, s: null },
    { n: 0, s: '', tags: [], o: {} },
    { tags: [null, 'a', 1, true, ['a'], { a: 1 }], o: { p: { q: 'abc' }, arr: ['x', 2] } },
    { 'x.y': 'literal dotted key', x: { y: 'abc' } },
    { x: [{ y: 1 }], o: [{ a: 1 }], a: { a: 'a' } },
    { s: 'a😀', n: 2.5, '😀': '\uffff', "it's": "it's", ключ: 'Ä' },
  ];
  const random = fc.sample(doc, { numRuns: 200, seed: DOCS_SEED });
  // What PostgreSQL stores is the JSON text; the reference evaluates the same round trip.
  docs = [...fixed, ...random].map((m, id) => ({ id, metadata: JSON.parse(JSON.stringify(m)) }));
  await db.batchInsert(
    'docs',
    docs.map((d) => ({ id: d.id, metadata: JSON.stringify(d.metadata) })),
    100,
  );
});

afterAll(async () => {
  await db?.destroy();
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
});

async function selectIds(sql: string, bindings: unknown[]): Promise<number[]> {
  const rows: { id: number }[] = await db('docs')
    .select('id')
    .whereRaw(sql, bindings as Knex.RawBinding[])
    .orderBy('id');
  return rows.map((r) => r.id);
}

describe('FL compiled filters on PostgreSQL agree with the reference evaluator', () => {
  it('FL 300 random filters select exactly the documents the SPEC semantics accept; NOT is the exact complement', async () => {
    let nonTrivial = 0;
    await fc.assert(
      fc.asyncProperty(filter, async (f) => {
        const { sql, bindings } = compileFilter(parseFilter(f), 'metadata');
        const expected = docs.filter((d) => evaluateFilter(f, d.metadata)).map((d) => d.id);
        const actual = await selectIds(sql, bindings);
        expect({ filter: f, docsSeed: DOCS_SEED, ids: actual }).toEqual({
          filter: f,
          docsSeed: DOCS_SEED,
          ids: expected,
        });
        // No SQL NULL leaks out of a filter: its negation selects every other document.
        const negated = await selectIds(`NOT (${sql})`, bindings);
        expect(negated.length + actual.length).toBe(docs.length);
        if (expected.length > 0 && expected.length < docs.length) nonTrivial++;
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
    // The vocabulary is small enough that many filters split the documents.
    expect(nonTrivial).toBeGreaterThan(60);
  });

  it('FL hand-picked edge cases agree too', async () => {
    const cases: Record<string, unknown>[] = [
      {},
      { a: null },
      { a: { $exists: true } },
      { 'x.y': 'abc' },
      { 'x.y': 'literal dotted key' },
      { 'tags.0': 'a' },
      { tags: { $contains: null } },
      { tags: { $contains: 'a' } },
      { s: { $contains: '' } },
      { n: { $gt: '0' } },
      { n: { $ne: '0' } },
      { s: { $ilike: 'A😀' } },
      { ключ: { $ilike: 'ä' } }, // ASCII-only case folding: no match
      { '😀': { $gt: '\ue000' } },
      { s: { $lt: '\uffff' } },
      { missing: { $nin: [1] } },
      { $not: { missing: { $gt: 1 } } },
      { n: { $in: [2.5, null] } },
      { n: { $between: [3, 1] } },
      { s: { $like: '%\\%%' } },
      { "it's": "it's" },
      { s: "'; DROP TABLE docs; --" },
    ];
    for (const f of cases) {
      const { sql, bindings } = compileFilter(parseFilter(f), 'metadata');
      const expected = docs.filter((d) => evaluateFilter(f, d.metadata)).map((d) => d.id);
      expect({ filter: f, ids: await selectIds(sql, bindings) }).toEqual({ filter: f, ids: expected });
    }
    expect(Number((await db('docs').count({ c: '*' }))[0]!.c)).toBe(docs.length);
  });
});
