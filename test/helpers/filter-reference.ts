// An in-memory evaluator of the filter language (SPEC §6 FL), written from the SPEC and
// docs/decisions.md independently of domain/filters.ts: the integration test compares it with
// the SQL that domain/filters.ts compiles. It assumes a filter that parseFilter accepts.
//
// Semantics: a path walks object keys only; a key present with JSON null is present; comparisons
// on a missing field or across JSON types are false, except $ne/$nin (their negations); numbers
// compare as numbers, strings by code point; $like/$ilike are SQL LIKE (`%`, `_`, `\` escapes),
// $ilike folding ASCII letters only; $contains is element (array) or substring (string).

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MISSING = Symbol('missing');
type Found = Json | typeof MISSING;

function jsonType(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v; // 'object' | 'string' | 'number' | 'boolean'
}

function lookup(doc: Json, dotted: string): Found {
  let cur: Json = doc;
  for (const key of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return MISSING;
    if (!Object.prototype.hasOwnProperty.call(cur, key)) return MISSING;
    cur = cur[key]!;
  }
  return cur;
}

/** Same JSON type and same value; scalars only on the filter side. */
function same(a: Found, b: Json): boolean {
  if (a === MISSING) return false;
  if (jsonType(a) !== jsonType(b)) return false;
  return a === b;
}

/** Code point order (not UTF-16 code unit order). */
function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** −1/0/1, or undefined when the two values are not both numbers or both strings. */
function order(a: Found, b: Json): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return Math.sign(compareCodePoints(a, b));
  return undefined;
}

const asciiLower = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** SQL LIKE by dynamic programming over code points; `\` makes the next character literal. */
function like(text: string, pattern: string): boolean {
  type Tok = { any: true } | { one: true } | { lit: string };
  const toks: Tok[] = [];
  const p = Array.from(pattern);
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') toks.push({ lit: p[++i]! });
    else if (c === '%') toks.push({ any: true });
    else if (c === '_') toks.push({ one: true });
    else toks.push({ lit: c });
  }
  const t = Array.from(text);
  // m[j] = the first i tokens match the first j characters
  let m = t.map(() => false);
  m = [true, ...m];
  for (const tok of toks) {
    const next = m.map(() => false);
    for (let j = 0; j <= t.length; j++) {
      if ('any' in tok) next[j] = m[j]! || (j > 0 && next[j - 1]!);
      else if (j > 0) next[j] = m[j - 1]! && ('one' in tok || tok.lit === t[j - 1]);
    }
    m = next;
  }
  return m[t.length]!;
}

function applyOperator(op: string, arg: any, v: Found): boolean {
  switch (op) {
    case '$eq':
      return same(v, arg);
    case '$ne':
      return !same(v, arg);
    case '$lt':
      return order(v, arg) === -1;
    case '$lte': {
      const o = order(v, arg);
      return o === -1 || o === 0;
    }
    case '$gt':
      return order(v, arg) === 1;
    case '$gte': {
      const o = order(v, arg);
      return o === 1 || o === 0;
    }
    case '$in':
      return (arg as Json[]).some((x) => same(v, x));
    case '$nin':
      return !(arg as Json[]).some((x) => same(v, x));
    case '$between':
      return applyOperator('$gte', arg[0], v) && applyOperator('$lte', arg[1], v);
    case '$exists':
      return (v !== MISSING) === arg;
    case '$like':
      return typeof v === 'string' && like(v, arg);
    case '$ilike':
      return typeof v === 'string' && like(asciiLower(v), asciiLower(arg));
    case '$contains':
      if (Array.isArray(v)) return v.some((e) => same(e, arg));
      return typeof v === 'string' && typeof arg === 'string' && v.includes(arg);
    default:
      throw new Error(`reference evaluator: unknown operator ${op}`);
  }
}

const isOperatorObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x) && Object.keys(x).every((k) => k.startsWith('$'));

export function evaluateFilter(filter: unknown, metadata: Record<string, unknown>): boolean {
  const doc = metadata as Json;
  return Object.entries(filter as Record<string, unknown>).every(([key, cond]) => {
    if (key === '$and') return (cond as unknown[]).every((f) => evaluateFilter(f, metadata));
    if (key === '$or') return (cond as unknown[]).some((f) => evaluateFilter(f, metadata));
    if (key === '$not') return !evaluateFilter(cond, metadata);
    const v = lookup(doc, key);
    if (isOperatorObject(cond)) return Object.entries(cond).every(([op, arg]) => applyOperator(op, arg, v));
    return applyOperator('$eq', cond, v);
  });
}
