// Request bodies for the bad-input fuzz test: values derived from a route's JSON Schema (valid-ish),
// mutations of them (missing fields, unknown fields, wrong types, huge strings, NUL, deep nesting,
// numbers JSON can carry but JavaScript cannot), random JSON and text that is not JSON.
// Values are plain JSON so fast-check can shrink and print them; text that JSON.stringify cannot
// produce (`1e400`, 20 000 nested arrays, 1 MB strings) is a small marker expanded when rendered.
import fc from 'fast-check';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, any>;

export interface SchemaContext {
  /** Ids of existing objects, offered wherever a schema asks for a UUID. */
  uuids: string[];
  /** The only URL offered for `format: uri` (the fake model server), so no request leaves the host. */
  url: string;
}

const RAW = '__fuzzRaw__';
/** A marker for text JSON.stringify cannot produce; see `expandRaw`. */
const raw = (text: string): Json => ({ [RAW]: text });

function expandRaw(text: string): string {
  const [kind, n] = text.split(':') as [string, string | undefined];
  const count = Number(n);
  if (kind === 'huge') return JSON.stringify('x'.repeat(count));
  if (kind === 'deeparray') return '['.repeat(count) + ']'.repeat(count);
  if (kind === 'deepobject') return '{"a":'.repeat(count) + '1' + '}'.repeat(count);
  return text;
}

/** JSON text of a generated value, with raw markers expanded. */
export function renderJson(value: Json): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && RAW in v) {
      raws.push(expandRaw(String((v as Record<string, unknown>)[RAW])));
      return `__FUZZ_RAW_${raws.length - 1}__`;
    }
    return v;
  });
  return raws.reduce((acc, r, i) => acc.replace(`"__FUZZ_RAW_${i}__"`, () => r), text ?? '');
}

const clone = (v: Json): Json => JSON.parse(JSON.stringify(v)) as Json;
/** `{"__proto__": ...}` as an own key, the way JSON.parse builds it on the server. */
const ownProto = JSON.parse('{"__proto__": {"polluted": true}}') as Json;

/** Values of every wrong kind: other types, edge numbers, hostile text, nesting and size. */
export const nastyValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom<Json>(null, true, false, 0, -1, 1.5, -0.5, 1e308, -1e308) },
  { weight: 2, arbitrary: fc.constantFrom<Json>(2 ** 53 + 1, -(2 ** 31) - 1, 2 ** 31, 0.1 + 0.2) },
  {
    weight: 6,
    arbitrary: fc.constantFrom<Json>(
      '',
      ' ',
      '\u0000',
      'a\u0000b',
      '\ud800',
      'x\udfff',
      '\ufeff',
      '😀',
      'null',
      '{question}',
      '{{prompt:missing}}',
      '{{foundationallm:current_datetime_utc:yyyy}}',
      "'; drop table llms; --",
      '../../etc/passwd',
      '$gt',
      'http://127.0.0.1:1/v1',
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom<Json>([], {}, [null], { '': null }, { $gt: 1 }, { $in: 'x' }, ownProto),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890', '1E-400', '-0').map(raw),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('deeparray', 'deepobject'), fc.constantFrom(64, 1000, 20000))
      .map(([kind, n]) => raw(`${kind}:${n}`)),
  },
  { weight: 2, arbitrary: fc.constantFrom(2001, 100_001, 1_100_000).map((n) => raw(`huge:${n}`)) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json> },
);

const cap = (n: number | undefined, fallback: number, limit: number): number =>
  Math.min(n ?? fallback, limit);

function stringFrom(schema: Schema, ctx: SchemaContext): fc.Arbitrary<Json> {
  const min = schema.minLength ?? 0;
  const max = cap(schema.maxLength, min + 30, min + 30);
  if (schema.format === 'uuid')
    return ctx.uuids.length > 0 ? fc.oneof(fc.constantFrom(...ctx.uuids), fc.uuid()) : fc.uuid();
  if (schema.format === 'uri' || schema.format === 'url') return fc.constant(ctx.url);
  if (schema.format === 'date-time') return fc.constant(new Date(0).toISOString());
  if (typeof schema.pattern === 'string') {
    try {
      const fits = (s: string) => s.length >= min && s.length <= (schema.maxLength ?? Infinity);
      return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
    } catch {
      // A pattern this engine cannot generate from: plain strings (mostly rejected, still useful).
    }
  }
  return fc.string({ minLength: min, maxLength: max });
}

function numberFrom(schema: Schema, integer: boolean): fc.Arbitrary<Json> {
  const lo = Math.max(schema.minimum ?? -1e6, schema.exclusiveMinimum ?? -Infinity, -1e9);
  const hi = Math.min(schema.maximum ?? 1e6, schema.exclusiveMaximum ?? Infinity, 1e9);
  const ints = fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) });
  if (integer) return ints;
  return fc.oneof(ints, fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true }));
}

/** A value that mostly satisfies `schema` (formats and patterns are approximated). */
export function fromSchema(schema: unknown, ctx: SchemaContext, depth = 0): fc.Arbitrary<Json> {
  if (!schema || typeof schema !== 'object' || depth > 6) return fc.jsonValue({ maxDepth: 1 }) as never;
  const s = schema as Schema;
  if ('const' in s) return fc.constant(s.const as Json);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as Json[]));
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches)) return fc.oneof(...branches.map((b) => fromSchema(b, ctx, depth + 1)));
  if (Array.isArray(s.type))
    return fc.oneof(...(s.type as string[]).map((t) => fromSchema({ ...s, type: t }, ctx, depth)));
  const type = (s.type as string | undefined) ?? (s.properties ? 'object' : undefined);
  switch (type) {
    case 'string':
      return stringFrom(s, ctx);
    case 'integer':
    case 'number':
      return numberFrom(s, type === 'integer');
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = s.minItems ?? 0;
      const max = cap(s.maxItems, min + 3, min + 3);
      const items = fromSchema(s.items, ctx, depth + 1);
      return s.uniqueItems
        ? fc.uniqueArray(items, { minLength: min, maxLength: max, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength: min, maxLength: max });
    }
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      if (Object.keys(props).length === 0) {
        const values =
          s.additionalProperties && typeof s.additionalProperties === 'object'
            ? fromSchema(s.additionalProperties, ctx, depth + 1)
            : (fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>);
        return fc.dictionary(fc.string({ maxLength: 12 }), values, { maxKeys: 3 });
      }
      const record = fc.record(
        Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fromSchema(v, ctx, depth + 1)])),
        { requiredKeys: (s.required ?? []) as string[] },
      ) as fc.Arbitrary<Json>;
      const minProps = (s.minProperties ?? 0) as number;
      return minProps > 0 ? record.filter((r) => Object.keys(r as object).length >= minProps) : record;
    }
    default:
      return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
  }
}

export type Mutation =
  | { kind: 'drop'; at: number }
  | { kind: 'unknown'; at: number; key: string; value: Json }
  | { kind: 'replace'; at: number; value: Json };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('unknown' as const),
    at: fc.nat(),
    key: fc.oneof(
      fc.constantFrom('colour', '__proto__', 'constructor', '', 'a'.repeat(300), 'naïve', '$where'),
      fc.string({ maxLength: 10 }),
    ),
    value: nastyValue,
  }),
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: nastyValue }),
  },
);

type Path = (string | number)[];

function pathsOf(value: Json, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...prefix, i], out));
  else if (value && typeof value === 'object' && !(RAW in value))
    for (const k of Object.keys(value)) pathsOf(value[k]!, [...prefix, k], out);
  return out;
}

function nodeAt(root: Json, path: Path): Json {
  return path.reduce<Json>((node, key) => (node as Record<string | number, Json>)[key]!, root);
}

const isObject = (v: Json): v is { [key: string]: Json } =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(RAW in v);

/** Applies mutations in order; each picks its node among the current ones by index. */
export function mutate(base: Json, mutations: Mutation[]): Json {
  let root = clone(base);
  for (const m of mutations) {
    const all = pathsOf(root);
    if (m.kind === 'drop') {
      const keyed = all.filter((p) => typeof p[p.length - 1] === 'string');
      if (keyed.length === 0) continue;
      const path = keyed[m.at % keyed.length]!;
      delete (nodeAt(root, path.slice(0, -1)) as Record<string, Json>)[path[path.length - 1] as string];
    } else if (m.kind === 'unknown') {
      const objects = all.filter((p) => isObject(nodeAt(root, p)));
      if (objects.length === 0) continue;
      const target = nodeAt(root, objects[m.at % objects.length]!) as Record<string, Json>;
      Object.defineProperty(target, m.key, {
        value: clone(m.value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      const path = all[m.at % all.length]!;
      if (path.length === 0) root = clone(m.value);
      else
        Object.defineProperty(nodeAt(root, path.slice(0, -1)) as object, path[path.length - 1]!, {
          value: clone(m.value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
  }
  return root;
}

/** Text that is not (quite) a JSON object: truncations, garbage, BOM, duplicate keys, random text. */
export function notJson(baseText: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.nat({ max: Math.max(0, baseText.length - 1) }).map((n) => baseText.slice(0, n)),
    fc.constantFrom(
      `${baseText} x`,
      `\ufeff${baseText}`,
      `${baseText}${baseText}`,
      baseText.replace('{', '{"dup": 1, "dup": "2", '),
      baseText.replace(/"/g, "'"),
      '',
      ' ',
      'null',
      'true',
      '"text"',
      '42',
      '[]',
      '[{}]',
      'NaN',
      '{"a": NaN}',
      '{"a": undefined}',
      '{,}',
      'name=x&age=1',
      '\u0000',
    ),
    fc.string({ unit: 'binary', maxLength: 60 }),
  );
}

export type { Json };
