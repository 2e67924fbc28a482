// What the named, owned resources of SPEC §2–§8 (API keys, LLMs, embedding models, text splitters,
// pipelines, agents) share: id, name, description, owner and timestamps, as an object, as a row,
// as selected columns and as list fields, their readable list and their update (and the camelCase
// owner and timestamps of prompts, chains and routing policies); imported as
// `import * as named from './named-resource'` (`named.Resource`, `named.columns(...)`, ...).
import type { Knex } from 'knex';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { ObjectType, Principal } from '../domain/permissions';
import { listReadable } from './list-query';
import { uniqueName } from './sql-helpers';

export interface Resource {
  id: string;
  name: string;
  description: string | null;
  ownerKeyId: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface Row extends Record<string, unknown> {
  id: string;
  name: string;
  description: string | null;
  owner_key_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The selected columns: the shared ones around the resource's own. */
export const columns = (...own: string[]): string[] => [
  'id',
  'name',
  'description',
  ...own,
  'owner_key_id',
  'created_at',
  'updated_at',
];

/** The listable fields (SPEC §1 lists): the shared ones around the resource's own. */
export const fields = (own: ListFields = {}): ListFields => ({
  id: 'uuid',
  name: 'string',
  description: 'string',
  ...own,
  created_at: 'timestamp',
  updated_at: 'timestamp',
});

export const of = (r: Row): Resource => ({
  id: r.id,
  name: r.name,
  description: r.description,
  ownerKeyId: r.owner_key_id,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** The shared columns of a new row, both timestamps `now`. */
export const newRow = (r: Omit<Resource, 'created_at' | 'updated_at'>, now: Date): Row => ({
  id: r.id,
  name: r.name,
  description: r.description,
  owner_key_id: r.ownerKeyId,
  created_at: now,
  updated_at: now,
});

export interface Table<Row, Item> {
  /** The table, which is also the permission object type. */
  table: ObjectType;
  /** How SPEC §1's name conflict calls the resource ("LLM name already exists"). */
  label: string;
  select: readonly string[];
  fields: ListFields;
  toItem: (row: Row) => Item;
}

/** A page of the resources the principal may read. */
export const list = <R extends Row, Item>(
  db: Knex,
  { table, select, fields, toItem }: Table<R, Item>,
  principal: Principal,
  req: ListRequest,
): Promise<ListPage<Item>> =>
  listReadable<R, Item>(
    db,
    { table, type: table, select, fields, toItem, nullableText: ['description'] },
    principal,
    req,
  );

/** The id of the resource of `table` named `name` (names are unique per type, SPEC §1), or null. */
export async function idByName(db: Knex, table: ObjectType, name: string): Promise<string | null> {
  const row = (await db(table).where({ name }).first('id')) as { id: string } | undefined;
  return row?.id ?? null;
}

/** Updates one resource's columns (and `updated_at`); a taken name is SPEC §1's 409. */
export async function update<R extends Row, Item>(
  db: Knex,
  spec: Table<R, Item>,
  id: string,
  patch: { name?: string } & Record<string, unknown>,
): Promise<Item> {
  const [row] = await uniqueName(spec.label, patch.name, () =>
    db(spec.table)
      .where({ id })
      .update({ ...patch, updated_at: new Date() })
      .returning(spec.select as string[]),
  );
  return spec.toItem(row as R);
}

/**
 * The SPEC §12–§13 resources (prompts, chains, routing policies) answer in camelCase: their shared
 * owner and timestamps, as an object and as a row.
 */
export interface Owned {
  id: string;
  ownerKeyId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface OwnedRow {
  id: string;
  owner_key_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const ownedOf = (r: OwnedRow): Owned => ({
  id: r.id,
  ownerKeyId: r.owner_key_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
