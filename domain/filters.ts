// The metadata filter language of SPEC §6 (FL): `parseFilter` validates a request's `filters`
// into an AST (400 naming the problem), `compileFilter` turns the AST into one parameterised SQL
// predicate over a jsonb column, in knex `whereRaw` style (`?` placeholders). Pure.
//
// Safety: the SQL text is assembled only from the constant fragments below; every field path
// segment and every value of the filter travels as a binding (`?::text`, `?::jsonb`), never
// inside the SQL string. The `column` argument is a trusted SQL expression chosen by our code.
//
// Semantics (decisions where SPEC is silent are marked "decision"):
// - `{"f": v}` is `{"f": {"$eq": v}}`; several keys in one object, and several operators on one
//   field, are ANDed; `{}` matches everything.
// - A dotted path walks object keys only (decision): `a.b` is `metadata -> 'a' -> 'b'`; a path
//   through an array or a scalar is missing, and a key that itself contains a dot cannot be named.
// - A field is present when its key exists, even with a JSON `null` value (`$exists: true`
//   matches it and `{"f": null}` matches it; a missing field matches neither).
// - Comparisons on a missing field, or with a value of another JSON type, are false; `$ne` and
//   `$nin` are exactly `NOT $eq` / `NOT $in`, so they are true in those cases.
// - `$lt $lte $gt $gte $between` take numbers or strings only (decision: booleans and null have no
//   order → 400); `$between [lo, hi]` is inclusive, both bounds of one type; `lo > hi` matches
//   nothing. Numbers compare numerically, strings by code point (`COLLATE "C"`).
// - `$in`/`$nin` take a list of scalars (null allowed; `[]` is allowed: `$in []` matches nothing).
// - `$like`/`$ilike` are SQL LIKE patterns (`%`, `_`, backslash escapes the next character) and
//   match string fields only; a pattern ending in a lone backslash → 400. `$ilike` folds case of
//   ASCII letters only (decision: deterministic across database locales).
// - `$contains v` (v a scalar): an array field contains an element equal to v (same JSON type);
//   a string field contains v as a substring when v is a string; anything else is false.
// - `$and`/`$or` take non-empty lists of filters, `$not` a filter object; they are allowed only
//   at filter level, not inside a field's operator object (decision).
// - Depth (SPEC §18, default 8): the top-level object is depth 1 and each `$and`/`$or`/`$not`
//   adds one (decision: a field's operator object does not count).
// - Strings (values and field names) must be well-formed Unicode without U+0000 (decision:
//   PostgreSQL text and jsonb cannot hold U+0000).
import { InvalidInput } from './errors';

export type Scalar = string | number | boolean | null;
export type Ordered = string | number;
/** Object keys from the top of the metadata down; never empty, no segment empty. */
export type FieldPath = string[];

export type FilterNode =
  | { op: 'and'; children: FilterNode[] }
  | { op: 'or'; children: FilterNode[] }
  | { op: 'not'; child: FilterNode }
  | { op: 'eq' | 'ne'; path: FieldPath; value: Scalar }
  | { op: 'lt' | 'lte' | 'gt' | 'gte'; path: FieldPath; value: Ordered }
  | { op: 'in' | 'nin'; path: FieldPath; values: Scalar[] }
  | { op: 'between'; path: FieldPath; lo: Ordered; hi: Ordered }
  | { op: 'exists'; path: FieldPath; value: boolean }
  | { op: 'like' | 'ilike'; path: FieldPath; pattern: string }
  | { op: 'contains'; path: FieldPath; value: Scalar };

export const DEFAULT_FILTER_DEPTH = 8;
export const FIELD_OPERATORS = [
  '$eq',
  '$ne',
  '$lt',
  '$lte',
  '$gt',
  '$gte',
  '$in',
  '$nin',
  '$between',
  '$exists',
  '$like',
  '$ilike',
  '$contains',
] as const;
export const LOGICAL_OPERATORS = ['$and', '$or', '$not'] as const;
const FIELD_OPS: ReadonlySet<string> = new Set(FIELD_OPERATORS);
const LOGICAL_OPS: ReadonlySet<string> = new Set(LOGICAL_OPERATORS);

// ---------------------------------------------------------------------------------------------
// Parsing

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const kindOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : isPlainObject(v) ? 'an object' : typeof v;

/** A lone surrogate: not well-formed UTF-16. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkText(s: string, what: string): string {
  if (s.includes('\u0000') || LONE_SURROGATE.test(s))
    throw new InvalidInput(`${what} contains U+0000 or an unpaired surrogate, which cannot be stored`);
  return s;
}

const show = (s: string): string => JSON.stringify(s);

function isScalar(v: unknown): v is Scalar {
  return (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v))
  );
}

class Parser {
  constructor(private readonly maxDepth: number) {}

  filter(raw: unknown, depth: number, where: string): FilterNode {
    if (depth > this.maxDepth)
      throw new InvalidInput(`Filter depth exceeds the limit of ${this.maxDepth} (at ${where})`);
    if (!isPlainObject(raw)) throw new InvalidInput(`${where} must be a JSON object, not ${kindOf(raw)}`);
    const children: FilterNode[] = [];
    for (const [key, value] of Object.entries(raw)) {
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(value) || value.length === 0)
          throw new InvalidInput(
            `${where}: ${key} must be a non-empty list of filters, not ${kindOf(value)}`,
          );
        children.push({
          op: key === '$and' ? 'and' : 'or',
          children: value.map((item, i) => this.filter(item, depth + 1, `${where}.${key}[${i}]`)),
        });
      } else if (key === '$not') {
        if (!isPlainObject(value))
          throw new InvalidInput(`${where}: $not must be a filter object, not ${kindOf(value)}`);
        children.push({ op: 'not', child: this.filter(value, depth + 1, `${where}.$not`) });
      } else if (key.startsWith('$')) {
        if (FIELD_OPS.has(key))
          throw new InvalidInput(
            `${where}: operator ${key} must be applied to a field, as in {"field": {"${key}": ...}}`,
          );
        throw new InvalidInput(`Unknown filter operator: ${show(key)}`);
      } else {
        children.push(...this.field(key, value));
      }
    }
    return children.length === 1 ? children[0]! : { op: 'and', children };
  }

  private path(key: string): FieldPath {
    if (key === '') throw new InvalidInput('Filter field name must not be empty');
    checkText(key, `Filter field ${show(key)}`);
    const path = key.split('.');
    if (path.some((s) => s === ''))
      throw new InvalidInput(`Filter field ${show(key)} has an empty path segment`);
    return path;
  }

  private field(key: string, value: unknown): FilterNode[] {
    const path = this.path(key);
    const name = `Filter field ${show(key)}`;
    if (!isPlainObject(value)) return [{ op: 'eq', path, value: this.scalar(value, `${name}: value`) }];
    const keys = Object.keys(value);
    if (keys.length === 0) throw new InvalidInput(`${name}: empty operator object`);
    const ops = keys.filter((k) => k.startsWith('$'));
    if (ops.length === 0)
      throw new InvalidInput(
        `${name}: a value must be a scalar or an operator object; use a dotted path (${show(`${key}.${keys[0]}`)}) for nested fields`,
      );
    if (ops.length !== keys.length)
      throw new InvalidInput(
        `${name}: operator object mixes operators and plain keys (${show(keys.find((k) => !k.startsWith('$'))!)})`,
      );
    return ops.map((op) => this.operator(path, name, op, value[op]));
  }

  private scalar(v: unknown, what: string): Scalar {
    if (!isScalar(v)) {
      const hint = Array.isArray(v) ? ' (use $in or $contains)' : '';
      throw new InvalidInput(`${what} must be a string, number, boolean or null, not ${kindOf(v)}${hint}`);
    }
    if (typeof v === 'string') checkText(v, what);
    return v;
  }

  private ordered(v: unknown, what: string): Ordered {
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string') return checkText(v, what);
    throw new InvalidInput(`${what} must be a number or a string, not ${kindOf(v)}`);
  }

  private operator(path: FieldPath, name: string, op: string, arg: unknown): FilterNode {
    const what = `${name}: ${op}`;
    switch (op) {
      case '$eq':
      case '$ne':
        return { op: op === '$eq' ? 'eq' : 'ne', path, value: this.scalar(arg, what) };
      case '$lt':
      case '$lte':
      case '$gt':
      case '$gte':
        return { op: op.slice(1) as 'lt' | 'lte' | 'gt' | 'gte', path, value: this.ordered(arg, what) };
      case '$in':
      case '$nin':
        if (!Array.isArray(arg))
          throw new InvalidInput(`${what} must be a list of scalars, not ${kindOf(arg)}`);
        return {
          op: op === '$in' ? 'in' : 'nin',
          path,
          values: arg.map((v, i) => this.scalar(v, `${what}[${i}]`)),
        };
      case '$between': {
        if (!Array.isArray(arg) || arg.length !== 2)
          throw new InvalidInput(`${what} must be a list [low, high] of two numbers or two strings`);
        const lo = this.ordered(arg[0], `${what}[0]`);
        const hi = this.ordered(arg[1], `${what}[1]`);
        if (typeof lo !== typeof hi)
          throw new InvalidInput(`${what} bounds must have the same type, not ${typeof lo} and ${typeof hi}`);
        return { op: 'between', path, lo, hi };
      }
      case '$exists':
        if (typeof arg !== 'boolean')
          throw new InvalidInput(`${what} must be true or false, not ${kindOf(arg)}`);
        return { op: 'exists', path, value: arg };
      case '$like':
      case '$ilike': {
        if (typeof arg !== 'string')
          throw new InvalidInput(`${what} must be a string pattern, not ${kindOf(arg)}`);
        checkText(arg, what);
        if (/(?:^|[^\\])(?:\\\\)*\\$/.test(arg))
          throw new InvalidInput(`${what} pattern must not end with a lone escape character (\\)`);
        return { op: op === '$like' ? 'like' : 'ilike', path, pattern: arg };
      }
      case '$contains':
        return { op: 'contains', path, value: this.scalar(arg, what) };
      default:
        if (LOGICAL_OPS.has(op))
          throw new InvalidInput(
            `${name}: ${op} is a logical operator; use it at filter level, not on a field`,
          );
        throw new InvalidInput(`Unknown filter operator: ${show(op)}`);
    }
  }
}

/** Validates a `filters` value (FL); InvalidInput names the problem. */
export function parseFilter(filter: unknown, maxDepth = DEFAULT_FILTER_DEPTH): FilterNode {
  return new Parser(maxDepth).filter(filter, 1, 'filter');
}

// ---------------------------------------------------------------------------------------------
// Compilation

export interface CompiledFilter {
  sql: string;
  bindings: unknown[];
}

/** A piece of SQL and the bindings of its `?` placeholders, in order. */
interface Sql {
  sql: string;
  bindings: unknown[];
}

/** The only way filter text enters the output: as a binding. */
const text = (v: string): Sql => ({ sql: '(?::text)', bindings: [v] });
const json = (v: unknown): Sql => ({ sql: '(?::jsonb)', bindings: [JSON.stringify(v)] });
const raw = (s: string): Sql => ({ sql: s, bindings: [] });

/** Constant SQL from this file with interpolated fragments; concatenates bindings in order. */
function sql(strings: TemplateStringsArray, ...parts: Sql[]): Sql {
  let out = strings[0]!;
  const bindings: unknown[] = [];
  parts.forEach((p, i) => {
    out += p.sql + strings[i + 1]!;
    bindings.push(...p.bindings);
  });
  return { sql: out, bindings };
}

function join(parts: Sql[], separator: string): Sql {
  return {
    sql: parts.map((p) => p.sql).join(separator),
    bindings: parts.flatMap((p) => p.bindings),
  };
}

class Compiler {
  constructor(private readonly column: string) {}

  /** The jsonb value at `path`, SQL NULL when missing; `->` with a text key on an array is NULL. */
  private at(path: FieldPath): Sql {
    return join([raw(`(${this.column})`), ...path.map(text)], ' -> ');
  }

  /** Leaves may yield SQL NULL (missing field); make them false so NOT and OR are exact. */
  private leaf(s: Sql): Sql {
    return sql`COALESCE(${s}, false)`;
  }

  private eq(path: FieldPath, value: Scalar): Sql {
    return this.leaf(sql`(${this.at(path)}) = ${json(value)}`);
  }

  private in(path: FieldPath, values: Scalar[]): Sql {
    const v = this.at(path);
    // The list holds scalars only, so an array or object field is never contained.
    return this.leaf(sql`(${v}) IS NOT NULL AND ${json(values)} @> jsonb_build_array(${v})`);
  }

  private compare(path: FieldPath, op: 'lt' | 'lte' | 'gt' | 'gte', value: Ordered): Sql {
    const sym = raw({ lt: '<', lte: '<=', gt: '>', gte: '>=' }[op]);
    const v = this.at(path);
    if (typeof value === 'number')
      // jsonb orders two numbers numerically; the type test keeps other types out.
      return this.leaf(sql`jsonb_typeof(${v}) = 'number' AND (${v}) ${sym} ${json(value)}`);
    return this.leaf(
      sql`jsonb_typeof(${v}) = 'string' AND ((${v}) #>> '{}') COLLATE "C" ${sym} ${text(value)} COLLATE "C"`,
    );
  }

  private like(path: FieldPath, pattern: string, fold: boolean): Sql {
    const v = this.at(path);
    const str = sql`((${v}) #>> '{}') COLLATE "C"`;
    const match = fold
      ? sql`lower(${str}) LIKE lower(${text(pattern)} COLLATE "C")`
      : sql`${str} LIKE ${text(pattern)} COLLATE "C"`;
    return this.leaf(sql`jsonb_typeof(${v}) = 'string' AND ${match}`);
  }

  private contains(path: FieldPath, value: Scalar): Sql {
    const v = this.at(path);
    const inArray = sql`WHEN 'array' THEN (${v}) @> ${json([value])}`;
    const inString =
      typeof value === 'string'
        ? sql` WHEN 'string' THEN strpos(((${v}) #>> '{}') COLLATE "C", ${text(value)}) > 0`
        : raw('');
    return this.leaf(sql`CASE jsonb_typeof(${v}) ${inArray}${inString} ELSE false END`);
  }

  node(n: FilterNode): Sql {
    switch (n.op) {
      case 'and':
        if (n.children.length === 0) return raw('TRUE');
        return sql`(${join(
          n.children.map((c) => this.node(c)),
          ' AND ',
        )})`;
      case 'or':
        return sql`(${join(
          n.children.map((c) => this.node(c)),
          ' OR ',
        )})`;
      case 'not':
        return sql`(NOT ${this.node(n.child)})`;
      case 'eq':
        return this.eq(n.path, n.value);
      case 'ne':
        return sql`(NOT ${this.eq(n.path, n.value)})`;
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte':
        return this.compare(n.path, n.op, n.value);
      case 'between':
        return sql`(${this.compare(n.path, 'gte', n.lo)} AND ${this.compare(n.path, 'lte', n.hi)})`;
      case 'in':
        return this.in(n.path, n.values);
      case 'nin':
        return sql`(NOT ${this.in(n.path, n.values)})`;
      case 'exists':
        return n.value ? sql`((${this.at(n.path)}) IS NOT NULL)` : sql`((${this.at(n.path)}) IS NULL)`;
      case 'like':
      case 'ilike':
        return this.like(n.path, n.pattern, n.op === 'ilike');
      case 'contains':
        return this.contains(n.path, n.value);
    }
  }
}

/**
 * Parameterised SQL (knex `whereRaw` style, `?` placeholders) for a parsed filter over the jsonb
 * expression `column` (trusted, e.g. `f.metadata`). Never NULL: true or false for every row.
 */
export function compileFilter(node: FilterNode, column: string): CompiledFilter {
  const { sql: out, bindings } = new Compiler(column).node(node);
  return { sql: out, bindings };
}
