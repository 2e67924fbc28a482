// The list conventions of SPEC §1 in one place: `limit`, `after`/`before` cursors, `order` and
// filter operators, parsed against the fields a resource exposes. Pure; db/list-query.ts turns
// the result into SQL.
import { InvalidInput } from './errors';

type FieldType = 'string' | 'number' | 'boolean' | 'timestamp' | 'uuid';
export type ListFields = Readonly<Record<string, FieldType>>;

const FILTER_OPS = ['eq', 'contains', 'startswith', 'ne', 'gt', 'gte', 'lt', 'lte', 'in'] as const;
type FilterOp = (typeof FILTER_OPS)[number];

export type ScalarValue = string | number | boolean;

interface ListFilter {
  field: string;
  op: FilterOp;
  value: ScalarValue | ScalarValue[];
}

export interface OrderTerm {
  field: string;
  desc: boolean;
}

export interface ListRequest {
  limit: number;
  /** Values of the order terms (then `id`) of the item the page starts after / ends before. */
  after?: ScalarValue[];
  before?: ScalarValue[];
  /** Always ends with `id` as the tie-breaker. */
  order: OrderTerm[];
  filters: ListFilter[];
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const RESERVED = new Set(['limit', 'after', 'before', 'order']);
const STRING_OPS: readonly FilterOp[] = ['contains', 'startswith'];
const ORDERED_OPS: readonly FilterOp[] = ['gt', 'gte', 'lt', 'lte'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** ISO 8601 date or date-time; `Date.parse` alone also takes "foo 12" and local-time formats. */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;
/** Own keys only: `constructor`, `toString`... are not fields. */
const isField = (fields: ListFields, name: string): boolean => Object.hasOwn(fields, name);

function single(name: string, raw: unknown): string {
  if (typeof raw !== 'string') throw new InvalidInput(`Query parameter ${name} must be given once`);
  return raw;
}

function parseValue(field: string, type: FieldType, raw: string): ScalarValue {
  switch (type) {
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n))
        throw new InvalidInput(`Filter ${field}: "${raw}" is not a number`);
      return n;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false')
        throw new InvalidInput(`Filter ${field}: "${raw}" is not true or false`);
      return raw === 'true';
    case 'timestamp': {
      const iso = ISO_TIMESTAMP.exec(raw);
      // A date-time without a zone is UTC (JavaScript would read it in the server's time zone).
      const time = iso ? Date.parse(iso[0].includes('T') && !iso[1] ? `${raw}Z` : raw) : NaN;
      if (Number.isNaN(time))
        throw new InvalidInput(`Filter ${field}: "${raw}" is not an ISO 8601 timestamp`);
      return new Date(time).toISOString();
    }
    case 'uuid':
      if (!UUID.test(raw)) throw new InvalidInput(`Filter ${field}: "${raw}" is not a valid id`);
      return raw.toLowerCase();
    case 'string':
      return raw;
  }
}

function parseOrder(raw: string | undefined, fields: ListFields): OrderTerm[] {
  const terms: OrderTerm[] = [];
  for (const part of (raw ?? 'created_at').split(',')) {
    const desc = part.startsWith('-');
    const field = desc ? part.slice(1) : part;
    if (!isField(fields, field)) throw new InvalidInput(`Unknown order field: ${field}`);
    if (terms.some((t) => t.field === field)) throw new InvalidInput(`Order field given twice: ${field}`);
    terms.push({ field, desc });
  }
  if (!terms.some((t) => t.field === 'id')) terms.push({ field: 'id', desc: terms[terms.length - 1]!.desc });
  return terms;
}

interface CursorBody {
  o: string;
  v: ScalarValue[];
}

const orderSignature = (order: OrderTerm[]): string =>
  order.map((t) => (t.desc ? '-' : '') + t.field).join(',');

export function encodeCursor(order: OrderTerm[], values: ScalarValue[]): string {
  const body: CursorBody = { o: orderSignature(order), v: values };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** Whether a cursor value can stand for a value of the field (a tampered cursor is a 400, not a SQL error). */
function fitsType(type: FieldType | undefined, v: unknown): boolean {
  switch (type) {
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    case 'timestamp':
      return typeof v === 'string' && ISO_TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v));
    case 'uuid':
      return typeof v === 'string' && UUID.test(v);
    default:
      return false;
  }
}

function decodeCursor(name: string, raw: string, order: OrderTerm[], fields: ListFields): ScalarValue[] {
  let body: CursorBody;
  try {
    body = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as CursorBody;
  } catch {
    throw new InvalidInput(`Invalid ${name} cursor`);
  }
  if (
    !body ||
    body.o !== orderSignature(order) ||
    !Array.isArray(body.v) ||
    body.v.length !== order.length ||
    !body.v.every((v, i) => fitsType(fields[order[i]!.field], v))
  ) {
    throw new InvalidInput(`Invalid ${name} cursor (it belongs to another order or list)`);
  }
  return body.v;
}

export function parseListQuery(query: Readonly<Record<string, unknown>>, fields: ListFields): ListRequest {
  const order = parseOrder(query.order === undefined ? undefined : single('order', query.order), fields);
  let limit = DEFAULT_LIMIT;
  if (query.limit !== undefined) {
    const raw = single('limit', query.limit);
    limit = Number(raw);
    if (!/^\d+$/.test(raw) || limit < 1 || limit > MAX_LIMIT) {
      throw new InvalidInput(`limit must be an integer between 1 and ${MAX_LIMIT}`);
    }
  }
  if (query.after !== undefined && query.before !== undefined) {
    throw new InvalidInput('Give either after or before, not both');
  }
  const after =
    query.after === undefined
      ? undefined
      : decodeCursor('after', single('after', query.after), order, fields);
  const before =
    query.before === undefined
      ? undefined
      : decodeCursor('before', single('before', query.before), order, fields);

  const filters: ListFilter[] = [];
  for (const [key, raw] of Object.entries(query)) {
    if (RESERVED.has(key)) continue;
    const dollar = key.indexOf('$');
    const field = dollar === -1 ? key : key.slice(0, dollar);
    const op = (dollar === -1 ? 'eq' : key.slice(dollar + 1)) as FilterOp;
    const type = isField(fields, field) ? fields[field] : undefined;
    if (type === undefined) throw new InvalidInput(`Unknown filter field: ${field}`);
    if (!FILTER_OPS.includes(op) || (dollar !== -1 && op === 'eq')) {
      throw new InvalidInput(`Unknown filter operator: $${key.slice(dollar + 1)}`);
    }
    if (STRING_OPS.includes(op) && type !== 'string')
      throw new InvalidInput(`Operator $${op} applies to text fields only, not ${field}`);
    if (ORDERED_OPS.includes(op) && type === 'boolean')
      throw new InvalidInput(`Operator $${op} does not apply to ${field}`);
    const text = single(key, raw);
    const value =
      op === 'in' ? text.split(',').map((v) => parseValue(field, type, v)) : parseValue(field, type, text);
    filters.push({ field, op, value });
  }
  return { limit, order, filters, ...(after ? { after } : {}), ...(before ? { before } : {}) };
}

/** SPEC §1 `query_info`: every applied filter, then the order. */
export function queryInfo(req: ListRequest): Record<string, unknown>[] {
  const visibleOrder = req.order.filter(
    (t, i) => !(t.field === 'id' && i === req.order.length - 1 && req.order.length > 1),
  );
  return [
    ...req.filters.map((f) => ({ field: f.field, op: f.op, value: f.value })),
    { order: orderSignature(visibleOrder) },
  ];
}

interface PageInfo {
  after: string | null;
  before: string | null;
  count: number;
  has_next: boolean;
  has_prev: boolean;
}

export interface ListPage<T> {
  data: T[];
  page_info: PageInfo;
  query_info: Record<string, unknown>[];
}
