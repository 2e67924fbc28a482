// Object access at the HTTP edge (SPEC §1, AUTH-3): a path id that is not a UUID or names a
// missing object is a 404; an object the key cannot read is a 404 for reads (existence is not
// revealed); a missing write or execute permission on an existing object is a 403.
import { Forbidden, NotFound } from '../domain/errors';
import { can, canOnAll, type Action, type ObjectType, type Principal } from '../domain/permissions';
import { isUuid } from '../infra/ids';

/** The object a path id names: a 404 naming `label` when the id is no UUID or names nothing. */
export async function loadById<T>(
  label: string,
  id: unknown,
  load: (id: string) => Promise<T | null>,
): Promise<T> {
  // Built only when thrown: an error's stack trace cost 30 µs on every request that found its object.
  const notFound = (): NotFound => new NotFound(`${label} with id ${String(id)} not found`);
  const object = typeof id === 'string' && isUuid(id) ? await load(id.toLowerCase()) : null;
  if (object === null || object === undefined) throw notFound();
  return object;
}

export async function loadAuthorized<T extends { id: string; ownerKeyId?: string | null }>(
  principal: Principal,
  action: Action,
  type: ObjectType,
  label: string,
  id: unknown,
  load: (id: string) => Promise<T | null>,
): Promise<T> {
  const object = await loadById(label, id, load);
  if (!can(principal, action, type, object)) {
    if (action === 'read') throw new NotFound(`${label} with id ${String(id)} not found`);
    throw new Forbidden(`API key lacks ${action} permission on ${label} ${object.id}`);
  }
  return object;
}

/** Creating an object of `type` takes a type-wide write grant (or admin): no object exists yet. */
export function requireCreate(principal: Principal, type: ObjectType, label: string): void {
  if (!canOnAll(principal, 'write', type))
    throw new Forbidden(`API key lacks write:${type} permission to create ${label}s`);
}

/**
 * Seed 002's resources (`/api/...`: prompts, routing policies, chains), addressed by the id their
 * grants name. Missing, or unreadable for a read or a write → 404 `<Label> <id> not found`; a
 * missing permission on an object the key can read, or a missing execute → 403.
 */
export async function loadSeedObject<T extends { ownerKeyId: string | null }>(
  principal: Principal,
  action: Action,
  type: ObjectType,
  label: string,
  id: string,
  load: (id: string) => Promise<T | null>,
  grantIdOf: (object: T) => string,
): Promise<T> {
  const notFound = (): NotFound =>
    new NotFound(`${label[0]!.toUpperCase()}${label.slice(1)} ${id} not found`);
  const object = await load(id);
  if (!object) throw notFound();
  const target = { id: grantIdOf(object), ownerKeyId: object.ownerKeyId };
  if (can(principal, action, type, target)) return object;
  if (action !== 'execute' && !can(principal, 'read', type, target)) throw notFound();
  if (action === 'read') throw notFound();
  throw new Forbidden(`API key lacks ${action} permission on ${label} ${id}`);
}
