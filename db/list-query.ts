// Keyset pagination, ordering and filtering for every list endpoint (SPEC §1), on top of a base
// query that already restricts rows to what the caller may read.
import type { Knex } from 'knex';
import type { ObjectType, Principal } from '../domain/permissions';
import { whereReadable } from './sql-helpers';
import {
  encodeCursor,
  queryInfo,
  type ListFields,
  type ListPage,
  type ListRequest,
  type OrderTerm,
  type ScalarValue,
} from '../domain/list-params';

/** Field name → SQL column (qualified when the base query joins). */
type ColumnMap = Readonly<Record<string, string>>;

type Direction = 'after' | 'before';

/**
 * Order expressions: a nullable text column orders (and pages) as `coalesce(col, '')`. knex
 * accepts a Raw wherever a column name goes; its types only say string.
 */
type OrderExprs = Readonly<Record<string, string>>;

/** Rows strictly after (or before) `values` in the order, as one OR-of-ANDs keyset predicate. */
function keyset(
  qb: Knex.QueryBuilder,
  columns: OrderExprs,
  order: OrderTerm[],
  values: ScalarValue[],
  dir: Direction,
): void {
  qb.where((outer) => {
    order.forEach((term, i) => {
      outer.orWhere((inner) => {
        for (let j = 0; j < i; j++) inner.where(columns[order[j]!.field]!, values[j]!);
        const forward = term.desc ? '<' : '>';
        const op = dir === 'after' ? forward : forward === '>' ? '<' : '>';
        inner.where(columns[term.field]!, op, values[i]!);
      });
    });
  });
}

function applyFilters(qb: Knex.QueryBuilder, columns: ColumnMap, req: ListRequest): void {
  for (const f of req.filters) {
    const col = columns[f.field]!;
    switch (f.op) {
      case 'eq':
        qb.where(col, f.value as ScalarValue);
        break;
      case 'ne':
        qb.where((w) => w.whereNot(col, f.value as ScalarValue).orWhereNull(col));
        break;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        qb.where(col, COMPARISONS[f.op], f.value as ScalarValue);
        break;
      case 'in':
        qb.whereIn(col, f.value as ScalarValue[]);
        break;
      case 'contains':
        qb.whereRaw('strpos(??, ?) > 0', [col, f.value as string]);
        break;
      case 'startswith':
        qb.whereRaw('starts_with(??, ?)', [col, f.value as string]);
        break;
    }
  }
}

const COMPARISONS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function cursorValue(v: unknown): ScalarValue {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return String(v);
}

/**
 * One page of `base` (a query over a single table or join) as the list envelope. `toItem` maps a
 * row to its API shape; rows must carry every order column under its field name.
 */
export async function listPage<Row extends Record<string, unknown>, Item>(
  base: () => Knex.QueryBuilder,
  columns: ColumnMap,
  req: ListRequest,
  toItem: (row: Row) => Item,
  nullableText: readonly string[] = [],
): Promise<ListPage<Item>> {
  const raw = base().client.raw.bind(base().client) as Knex['raw'];
  const exprs: OrderExprs = Object.fromEntries(
    Object.entries(columns).map(([field, col]) => [
      field,
      nullableText.includes(field) ? (raw("coalesce(??, '')", [col]) as unknown as string) : col,
    ]),
  );
  const backwards = req.before !== undefined;
  const cursor = req.before ?? req.after;
  const order = req.order;
  const valuesOf = (row: Row): ScalarValue[] => order.map((t) => cursorValue(row[t.field]));
  const filtered = (): Knex.QueryBuilder => {
    const qb = base();
    applyFilters(qb, columns, req);
    return qb;
  };

  const pageQuery = filtered();
  if (cursor) keyset(pageQuery, exprs, order, cursor, backwards ? 'before' : 'after');
  for (const term of order) {
    const desc = backwards ? !term.desc : term.desc;
    pageQuery.orderBy(exprs[term.field]!, desc ? 'desc' : 'asc');
  }
  const fetched = (await pageQuery.limit(req.limit + 1)) as Row[];
  const more = fetched.length > req.limit;
  const rows = fetched.slice(0, req.limit);
  if (backwards) rows.reverse();

  // Whether anything lies on the other side of the page (or of the cursor, for an empty page).
  const exists = async (values: ScalarValue[], dir: Direction): Promise<boolean> => {
    const qb = filtered();
    keyset(qb, exprs, order, values, dir);
    return (await qb.clearSelect().select(base().client.raw('1')).limit(1)).length > 0;
  };
  let hasNext: boolean;
  let hasPrev: boolean;
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (backwards) {
    hasPrev = more;
    hasNext = last
      ? await exists(valuesOf(last), 'after')
      : cursor
        ? await existsFrom(cursor, 'after')
        : false;
  } else {
    hasNext = more;
    hasPrev = first
      ? await exists(valuesOf(first), 'before')
      : cursor
        ? await existsFrom(cursor, 'before')
        : false;
  }

  async function existsFrom(values: ScalarValue[], dir: Direction): Promise<boolean> {
    // Items at or beyond the cursor position in `dir`: the cursor item itself may be gone.
    const qb = filtered();
    qb.where((w) => {
      keyset(w as unknown as Knex.QueryBuilder, exprs, order, values, dir);
      w.orWhere((eq) => order.forEach((t, i) => eq.where(exprs[t.field]!, values[i]!)));
    });
    return (await qb.clearSelect().select(base().client.raw('1')).limit(1)).length > 0;
  }

  return {
    data: rows.map(toItem),
    page_info: {
      after: last ? encodeCursor(order, valuesOf(last)) : null,
      before: first ? encodeCursor(order, valuesOf(first)) : null,
      count: rows.length,
      has_next: hasNext,
      has_prev: hasPrev,
    },
    query_info: queryInfo(req),
  };
}

interface ReadableListSpec<Row, Item> {
  table: string;
  type: ObjectType;
  /** Columns selected for each row. */
  select: readonly string[];
  /** Listable fields; each is the column of the same name in `table`. */
  fields: ListFields;
  toItem: (row: Row) => Item;
  nullableText?: readonly string[];
}

/** A page of one table's rows that the principal may read (SPEC §1: lists show only those). */
export function listReadable<Row extends Record<string, unknown>, Item>(
  db: Knex,
  spec: ReadableListSpec<Row, Item>,
  principal: Principal,
  req: ListRequest,
): Promise<ListPage<Item>> {
  const columns = Object.fromEntries(Object.keys(spec.fields).map((f) => [f, `${spec.table}.${f}`]));
  return listPage<Row, Item>(
    () => {
      const qb = db(spec.table).select(spec.select);
      whereReadable(qb, principal, spec.type, spec.table);
      return qb;
    },
    columns,
    req,
    spec.toItem,
    spec.nullableText,
  );
}
