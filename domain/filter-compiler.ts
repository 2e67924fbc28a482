// `compileFilter`: a parsed filter (filters.ts) → one parameterised SQL predicate over a jsonb
// column, in knex `whereRaw` style (`?` placeholders), true or false for every row. Pure.
//
// Safety: the SQL text is assembled only from the constant fragments below; every field path
// segment and every value of the filter travels as a binding (`?::text`, `?::jsonb`), never
// inside the SQL string. The `column` argument is a trusted SQL expression chosen by our code.
import type { FieldPath, FilterNode, Ordered, Scalar } from './filters';

interface CompiledFilter {
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

  /**
   * Equality, ANDed with the containment it implies (`{"a": {"b": v}}`), which is redundant for
   * the result but lets PostgreSQL find the matching rows in the metadata's GIN index: a selective
   * equality filter is then an exact scan of its rows instead of a long HNSW walk (issue 26:
   * 5.4–5.8 ms against 74–298 ms at 20k fragments, docs/decisions.md). The column is NOT NULL.
   */
  private eq(path: FieldPath, value: Scalar): Sql {
    const nested = path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
    return sql`(${this.leaf(sql`(${this.at(path)}) = ${json(value)}`)} AND (${raw(this.column)}) @> ${json(nested)})`;
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
