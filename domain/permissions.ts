// Permission strings and the rules that read them (SPEC §2, AUTH-2/3/5). Pure: the caller
// supplies the principal and, for object checks, the object's owner.

export const ACTIONS = ['read', 'write', 'execute'] as const;
export type Action = (typeof ACTIONS)[number];

export const OBJECT_TYPES = [
  'agents',
  'pipelines',
  'llms',
  'prompts',
  'chains',
  'routing_policies',
  'api_keys',
  'embedding_models',
  'text_splitters',
] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

interface Grant {
  action: Action;
  type: ObjectType;
  /** Absent: every object of the type, including future ones. */
  id?: string;
}

export interface Principal {
  keyId: string;
  permissions: readonly string[];
}

const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** Parses `<action>:<type>[:<id>]`; `null` for `admin` and for anything malformed (see isValidPermission). */
export function parseGrant(permission: string): Grant | null {
  const parts = permission.split(':');
  if (parts.length < 2 || parts.length > 3) return null;
  const [action, type, id] = parts as [string, string, string | undefined];
  if (!(ACTIONS as readonly string[]).includes(action)) return null;
  if (!(OBJECT_TYPES as readonly string[]).includes(type)) return null;
  if (id !== undefined && !ID_PATTERN.test(id)) return null;
  return id === undefined
    ? { action: action as Action, type: type as ObjectType }
    : { action: action as Action, type: type as ObjectType, id };
}

export function isValidPermission(permission: string): boolean {
  return permission === 'admin' || parseGrant(permission) !== null;
}

export const isAdmin = (p: Principal): boolean => p.permissions.includes('admin');

function grants(p: Principal): Grant[] {
  return p.permissions.map(parseGrant).filter((g): g is Grant => g !== null);
}

/** May the principal perform `action` on every object of `type` (type-wide grant or admin)? */
export function canOnAll(p: Principal, action: Action, type: ObjectType): boolean {
  return isAdmin(p) || grants(p).some((g) => g.action === action && g.type === type && g.id === undefined);
}

/** Object ids explicitly granted for `action` on `type`. */
export function grantedIds(p: Principal, action: Action, type: ObjectType): string[] {
  return grants(p)
    .filter((g) => g.action === action && g.type === type && g.id !== undefined)
    .map((g) => g.id!);
}

/** May the principal perform `action` on this object? Owners hold every action (AUTH-3). */
export function can(
  p: Principal,
  action: Action,
  type: ObjectType,
  object: { id: string; ownerKeyId?: string | null },
): boolean {
  if (object.ownerKeyId && object.ownerKeyId === p.keyId) return true;
  return canOnAll(p, action, type) || grantedIds(p, action, type).includes(object.id);
}

/**
 * AUTH-5: a key can grant only what it holds. `ownsObject` tells whether the granter owns an
 * object (ownership holds read/write/execute on it).
 */
export function holdsPermission(
  p: Principal,
  permission: string,
  ownsObject: (type: ObjectType, id: string) => boolean,
): boolean {
  if (isAdmin(p)) return true;
  if (permission === 'admin') return false;
  const g = parseGrant(permission);
  if (!g) return false;
  if (canOnAll(p, g.action, g.type)) return true;
  return g.id !== undefined && (grantedIds(p, g.action, g.type).includes(g.id) || ownsObject(g.type, g.id));
}
