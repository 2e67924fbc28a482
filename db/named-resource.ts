// What the named, owned resources of SPEC §2–§8 (API keys, LLMs, embedding models, text splitters,
// pipelines, agents) share: id, name, description, owner and timestamps, as an object, as a row,
// as selected columns and as list fields, and the readable list over their table.
import type { Knex } from 'knex';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { ObjectType, Principal } from '../domain/permissions';
import { listReadable } from './list-query';

export interface NamedResource {
  id: string;
  name: string;
  description: string | null;
  ownerKeyId: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NamedRow extends Record<string, unknown> {
  id: string;
  name: string;
  description: string | null;
  owner_key_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The selected columns: the shared ones around the resource's own. */
export const namedColumns = (...own: string[]): string[] => [
  'id',
  'name',
  'description',
  ...own,
  'owner_key_id',
  'created_at',
  'updated_at',
];

/** The listable fields (SPEC §1 lists): the shared ones around the resource's own. */
export const namedFields = (own: ListFields = {}): ListFields => ({
  id: 'uuid',
  name: 'string',
  description: 'string',
  ...own,
  created_at: 'timestamp',
  updated_at: 'timestamp',
});

export const namedOf = (r: NamedRow): NamedResource => ({
  id: r.id,
  name: r.name,
  description: r.description,
  ownerKeyId: r.owner_key_id,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export interface NamedTable<Row, Item> {
  /** The table, which is also the permission object type. */
  table: ObjectType;
  select: readonly string[];
  fields: ListFields;
  toItem: (row: Row) => Item;
}

/** A page of the resources the principal may read. */
export const listNamed = <Row extends NamedRow, Item>(
  db: Knex,
  { table, ...spec }: NamedTable<Row, Item>,
  principal: Principal,
  req: ListRequest,
): Promise<ListPage<Item>> =>
  listReadable<Row, Item>(db, { ...spec, table, type: table, nullableText: ['description'] }, principal, req);
