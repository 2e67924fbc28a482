// Small SQL conventions shared by the stores: read visibility, unique-violation mapping and
// pgvector's binary vector parameter.
import type { Knex } from 'knex';
import { Conflict } from '../domain/errors';
import { canOnAll, grantedIds, type ObjectType, type Principal } from '../domain/permissions';

/** Restricts `qb` to rows the principal may read: type-wide grant, owned, or granted by id. */
export function whereReadable(
  qb: Knex.QueryBuilder,
  principal: Principal,
  type: ObjectType,
  table: string,
): void {
  if (canOnAll(principal, 'read', type)) return;
  const ids = grantedIds(principal, 'read', type).filter((id) => UUID.test(id));
  qb.where((w) => {
    w.where(`${table}.owner_key_id`, principal.keyId);
    if (ids.length > 0) w.orWhereIn(`${table}.id`, ids);
  });
}

/**
 * The readable rows of a seed-002 resource (prompts, chains, routing policies), oldest first:
 * type-wide grant, owned, or granted by the id in `idColumn` (a slug for prompts and chains).
 */
export function readableOldestFirst(
  db: Knex,
  table: string,
  principal: Principal,
  type: ObjectType,
  idColumn = 'id',
): Knex.QueryBuilder {
  const qb = db(table).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  if (!canOnAll(principal, 'read', type)) {
    const ids = grantedIds(principal, 'read', type);
    qb.where((w) => {
      w.where('owner_key_id', principal.keyId);
      if (ids.length > 0) w.orWhereIn(idColumn, ids);
    });
  }
  return qb;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Runs an insert/update and turns a unique violation into SPEC §1's 409 message. */
export async function uniqueName<T>(
  label: string,
  name: string | undefined,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw new Conflict(`${label} name already exists: ${name}`);
    throw err;
  }
}

/**
 * pgvector's binary input format (vector_recv: int16 dimensions, int16 0, float4 × dimensions,
 * big-endian), sent as a binary parameter: a fifth of the bytes of the text form of a float64
 * array and no float parsing on the server. pgvector stores float4 anyway.
 */
export function vectorParameter(vector: number[]): Buffer {
  const buf = Buffer.allocUnsafe(4 + 4 * vector.length);
  buf.writeInt16BE(vector.length, 0);
  buf.writeInt16BE(0, 2);
  for (let i = 0; i < vector.length; i++) buf.writeFloatBE(vector[i]!, 4 + 4 * i);
  return buf;
}
