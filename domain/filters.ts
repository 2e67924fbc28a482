// The metadata filter language of SPEC §6 (FL): its AST, its operators and what they mean.
// `parseFilter` (filter-parser.ts) validates a request's `filters` into the AST (400 naming the
// problem); `compileFilter` (filter-compiler.ts) turns the AST into one parameterised SQL
// predicate over a jsonb column. Pure.
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
