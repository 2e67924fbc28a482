// SPEC §2 (AUTH-2, AUTH-3, AUTH-5): permission strings and the rules that read them.
import fc from 'fast-check';
import { requireCreate } from '../../api/access';
import { Forbidden } from '../../domain/errors';
import {
  ACTIONS,
  OBJECT_TYPES,
  can,
  canOnAll,
  grantedIds,
  holdsPermission,
  isAdmin,
  isValidPermission,
  parseGrant,
  type ObjectType,
  type Principal,
} from '../../domain/permissions';

const KEY = '0190a1b2-0000-7000-8000-000000000001';
const OTHER_KEY = '0190a1b2-0000-7000-8000-000000000002';
const OBJ = '0190a1b2-0000-7000-8000-0000000000aa';
const OTHER_OBJ = '0190a1b2-0000-7000-8000-0000000000bb';

const principal = (...permissions: string[]): Principal => ({ keyId: KEY, permissions });
const ownsNothing = (): boolean => false;

describe('parseGrant / isValidPermission (AUTH-2)', () => {
  it('AUTH-2: parses a type-wide grant without an id', () => {
    expect(parseGrant('read:agents')).toEqual({ action: 'read', type: 'agents' });
    expect(parseGrant('read:agents')).not.toHaveProperty('id');
  });

  it('AUTH-2: parses an object grant with its id', () => {
    expect(parseGrant(`execute:llms:${OBJ}`)).toEqual({ action: 'execute', type: 'llms', id: OBJ });
  });

  it('AUTH-2: accepts every action on every type', () => {
    for (const action of ACTIONS) {
      for (const type of OBJECT_TYPES) {
        expect(isValidPermission(`${action}:${type}`)).toBe(true);
        expect(isValidPermission(`${action}:${type}:${OBJ}`)).toBe(true);
      }
    }
  });

  it('AUTH-2: grants on prompts use the promptId (non-UUID ids are allowed)', () => {
    expect(parseGrant('read:prompts:my-prompt.v2')).toEqual({
      action: 'read',
      type: 'prompts',
      id: 'my-prompt.v2',
    });
  });

  it('AUTH-2: rejects an unknown action', () => {
    expect(parseGrant('delete:agents')).toBeNull();
    expect(isValidPermission('delete:agents')).toBe(false);
    expect(isValidPermission('READ:agents')).toBe(false);
  });

  it('AUTH-2: rejects an unknown type', () => {
    expect(parseGrant('read:agent')).toBeNull();
    expect(isValidPermission('read:documents')).toBe(false);
  });

  it('AUTH-2: rejects too many or too few parts, and empty or malformed ids', () => {
    expect(isValidPermission(`read:agents:${OBJ}:extra`)).toBe(false);
    expect(isValidPermission('read')).toBe(false);
    expect(isValidPermission('')).toBe(false);
    expect(isValidPermission('read:agents:')).toBe(false);
    expect(isValidPermission('read:agents:has space')).toBe(false);
    expect(isValidPermission(`read:agents:${'x'.repeat(129)}`)).toBe(false);
  });

  it('AUTH-2: `admin` is valid but is not a grant', () => {
    expect(isValidPermission('admin')).toBe(true);
    expect(parseGrant('admin')).toBeNull();
    expect(isValidPermission('admin:agents')).toBe(false);
    expect(isAdmin(principal('admin'))).toBe(true);
    expect(isAdmin(principal('read:agents'))).toBe(false);
  });
});

describe('canOnAll / grantedIds (AUTH-2)', () => {
  it('AUTH-2: a type-wide grant covers the whole type for that action only', () => {
    const p = principal('read:agents');
    expect(canOnAll(p, 'read', 'agents')).toBe(true);
    expect(canOnAll(p, 'write', 'agents')).toBe(false);
    expect(canOnAll(p, 'read', 'llms')).toBe(false);
  });

  it('AUTH-2: an object grant does not cover the whole type', () => {
    expect(canOnAll(principal(`read:agents:${OBJ}`), 'read', 'agents')).toBe(false);
  });

  it('AUTH-2: admin can do everything on every type', () => {
    for (const action of ACTIONS) {
      for (const type of OBJECT_TYPES) expect(canOnAll(principal('admin'), action, type)).toBe(true);
    }
  });

  it('AUTH-2: grantedIds lists only the ids granted for that action and type', () => {
    const p = principal(
      `read:agents:${OBJ}`,
      `read:agents:${OTHER_OBJ}`,
      `write:agents:wrong-action`,
      `read:llms:wrong-type`,
      'read:agents',
      'garbage',
    );
    expect(grantedIds(p, 'read', 'agents')).toEqual([OBJ, OTHER_OBJ]);
    expect(grantedIds(p, 'execute', 'agents')).toEqual([]);
  });
});

describe('can (AUTH-2, AUTH-3)', () => {
  it('AUTH-2: a type-wide grant covers future objects', () => {
    const p = principal('execute:agents');
    // Any id, including one created after the grant.
    expect(can(p, 'execute', 'agents', { id: OBJ })).toBe(true);
    expect(can(p, 'execute', 'agents', { id: '0190ffff-0000-7000-8000-000000000999' })).toBe(true);
    expect(can(p, 'read', 'agents', { id: OBJ })).toBe(false);
  });

  it('AUTH-2: an id grant covers that object and no other', () => {
    const p = principal(`read:llms:${OBJ}`);
    expect(can(p, 'read', 'llms', { id: OBJ })).toBe(true);
    expect(can(p, 'read', 'llms', { id: OTHER_OBJ })).toBe(false);
    expect(can(p, 'write', 'llms', { id: OBJ })).toBe(false);
    expect(can(p, 'read', 'agents', { id: OBJ })).toBe(false);
  });

  it('AUTH-3: the owner holds read, write and execute on its object without any grant', () => {
    const p = principal();
    for (const action of ACTIONS) {
      expect(can(p, action, 'agents', { id: OBJ, ownerKeyId: KEY })).toBe(true);
    }
  });

  it('AUTH-3: ownership by another key gives nothing', () => {
    const p = principal();
    expect(can(p, 'read', 'agents', { id: OBJ, ownerKeyId: OTHER_KEY })).toBe(false);
    expect(can(p, 'read', 'agents', { id: OBJ, ownerKeyId: null })).toBe(false);
    expect(can(p, 'read', 'agents', { id: OBJ })).toBe(false);
  });

  it('AUTH-2: admin can do everything on any object', () => {
    const p = principal('admin');
    for (const action of ACTIONS) {
      expect(can(p, action, 'api_keys', { id: OBJ, ownerKeyId: OTHER_KEY })).toBe(true);
    }
  });
});

describe('holdsPermission (AUTH-5)', () => {
  it('AUTH-5: cannot grant admin unless admin', () => {
    expect(holdsPermission(principal('write:api_keys', 'read:agents'), 'admin', ownsNothing)).toBe(false);
    expect(holdsPermission(principal('admin'), 'admin', ownsNothing)).toBe(true);
  });

  it('AUTH-5: admin can grant anything valid', () => {
    expect(holdsPermission(principal('admin'), 'write:pipelines', ownsNothing)).toBe(true);
    expect(holdsPermission(principal('admin'), `execute:agents:${OBJ}`, ownsNothing)).toBe(true);
  });

  it('AUTH-5: cannot grant type-wide when holding only an id grant', () => {
    const p = principal(`read:agents:${OBJ}`);
    expect(holdsPermission(p, 'read:agents', ownsNothing)).toBe(false);
    expect(holdsPermission(p, `read:agents:${OBJ}`, ownsNothing)).toBe(true);
    expect(holdsPermission(p, `read:agents:${OTHER_OBJ}`, ownsNothing)).toBe(false);
  });

  it('AUTH-5: a type-wide grant lets a key grant the type and any of its objects', () => {
    const p = principal('read:agents');
    expect(holdsPermission(p, 'read:agents', ownsNothing)).toBe(true);
    expect(holdsPermission(p, `read:agents:${OBJ}`, ownsNothing)).toBe(true);
  });

  it('AUTH-5: cannot grant another action or type than held', () => {
    const p = principal('read:agents');
    expect(holdsPermission(p, 'write:agents', ownsNothing)).toBe(false);
    expect(holdsPermission(p, 'read:llms', ownsNothing)).toBe(false);
    expect(holdsPermission(p, `execute:agents:${OBJ}`, ownsNothing)).toBe(false);
  });

  it('AUTH-5: can grant any action on an owned object, but not the whole type', () => {
    const owned = (type: ObjectType, id: string): boolean => type === 'agents' && id === OBJ;
    const p = principal();
    for (const action of ACTIONS) expect(holdsPermission(p, `${action}:agents:${OBJ}`, owned)).toBe(true);
    expect(holdsPermission(p, `read:agents:${OTHER_OBJ}`, owned)).toBe(false);
    expect(holdsPermission(p, `read:llms:${OBJ}`, owned)).toBe(false);
    expect(holdsPermission(p, 'read:agents', owned)).toBe(false);
  });

  it('AUTH-5: malformed permissions are never held', () => {
    expect(holdsPermission(principal('read:agents'), 'read:agents:a:b', ownsNothing)).toBe(false);
    expect(holdsPermission(principal('read:agents'), 'bogus', ownsNothing)).toBe(false);
  });

  const actionArb = fc.constantFrom(...ACTIONS);
  const typeArb = fc.constantFrom(...OBJECT_TYPES);
  const idArb = fc.constantFrom(OBJ, OTHER_OBJ, 'prompt-1');
  const permissionArb = fc.oneof(
    fc.constant('admin'),
    fc.tuple(actionArb, typeArb).map(([a, t]) => `${a}:${t}`),
    fc.tuple(actionArb, typeArb, idArb).map(([a, t, id]) => `${a}:${t}:${id}`),
    fc.string(), // garbage, never valid, must not break anything
  );

  it('AUTH-5 (property): a key holds every valid permission it was given', () => {
    fc.assert(
      fc.property(fc.array(permissionArb, { maxLength: 8 }), (permissions) => {
        const p = principal(...permissions);
        for (const x of permissions.filter(isValidPermission)) {
          if (!holdsPermission(p, x, ownsNothing)) return false;
        }
        return true;
      }),
    );
  });

  it('AUTH-5 (property): without admin or ownership, whatever is held was given', () => {
    fc.assert(
      fc.property(
        fc.array(
          permissionArb.filter((x) => x !== 'admin'),
          { maxLength: 8 },
        ),
        permissionArb,
        (permissions, x) => {
          const p = principal(...permissions);
          if (!holdsPermission(p, x, ownsNothing)) return true;
          const g = parseGrant(x)!;
          return permissions.includes(x) || permissions.includes(`${g.action}:${g.type}`);
        },
      ),
    );
  });
});

describe('requireCreate (AUTH-2: creating takes a type-wide write grant)', () => {
  it('admits admin and write:<type>; refuses grants on single objects and on other types', () => {
    expect(() => requireCreate(principal('admin'), 'llms', 'LLM')).not.toThrow();
    expect(() => requireCreate(principal('write:llms'), 'llms', 'LLM')).not.toThrow();
    for (const refused of [
      principal('write:llms:some-id'),
      principal('write:agents', 'read:llms'),
      principal(),
    ])
      expect(() => requireCreate(refused, 'llms', 'LLM')).toThrow(
        new Forbidden('API key lacks write:llms permission to create LLMs'),
      );
  });
});
