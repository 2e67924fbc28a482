// `parseFilter`: a request's `filters` (SPEC §6 FL) → the AST of filters.ts, or InvalidInput
// naming the problem (unknown operators, wrong argument types, depth, text PostgreSQL cannot
// hold). The semantics it checks are written down in filters.ts.
import { InvalidInput } from './errors';
import { DEFAULT_LIMITS } from './limits';
import {
  FIELD_OPERATORS,
  LOGICAL_OPERATORS,
  type FieldPath,
  type FilterNode,
  type Ordered,
  type Scalar,
} from './filters';

const FIELD_OPS: ReadonlySet<string> = new Set(FIELD_OPERATORS);
const LOGICAL_OPS: ReadonlySet<string> = new Set(LOGICAL_OPERATORS);

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
/** `maxDepth`: SPEC §18 filter depth (configured: `limits.filterDepth`). */
export function parseFilter(filter: unknown, maxDepth: number = DEFAULT_LIMITS.filterDepth): FilterNode {
  return new Parser(maxDepth).filter(filter, 1, 'filter');
}
