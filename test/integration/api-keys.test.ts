// AUTH-1..6 through the real API and PostgreSQL: secrets shown once and stored as HMACs,
// permission grants and ownership, the bootstrap admin key, grant limits, and the per-address
// failed-authentication limit (here 5, so the file shortens it to keep runs fast).
import { createHash } from 'node:crypto';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import type { Api, Credentials } from '../helpers/http';
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;
let fake: FakeModelServer;

const INVALID = { detail: 'Invalid API key' };
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// Deliberate failures come from their own client address (the API trusts X-Forwarded-For from
// loopback), so the failure counter of AUTH-6 is never shared between tests.
let addressCounter = 0;
const fromNewAddress = (): Record<string, string> => ({
  'x-forwarded-for': `198.51.100.${++addressCounter}`,
});

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack({ env: { AGENTRY_AUTH_FAILURE_LIMIT: '5' } });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

type Key = Credentials & { body: any };

async function createKey(name: string, permissions: string[], as: Api = stack.api): Promise<Key> {
  const res = await as.post('/api_keys', { name, permissions });
  expect(res.status).toBe(201);
  return { id: res.body.id, secret: res.body.secret, body: res.body };
}

async function createLlm(name: string, as: Api = stack.api, model = 'default'): Promise<string> {
  const res = await as.post('/llms', { name, endpoint: fake.url, model, api_key: `sk-${name}` });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const count = async (table: string): Promise<number> =>
  Number(((await stack.rt.db(table).count({ n: '*' })) as { n: string }[])[0]!.n);

describe('AUTH-1 keys and secrets', () => {
  it('AUTH-1: create answers 201 with a 256-bit secret once; GET and list never return it', async () => {
    const res = await stack.api.post('/api_keys', {
      name: 'auth1-reader',
      description: 'reads LLMs',
      permissions: ['read:llms'],
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      ['created_at', 'description', 'id', 'name', 'permissions', 'secret', 'updated_at'].sort(),
    );
    expect(res.body).toMatchObject({
      name: 'auth1-reader',
      description: 'reads LLMs',
      permissions: ['read:llms'],
    });
    expect(res.body.id).toMatch(UUID_V7);
    const secret = res.body.secret as string;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);

    const other = await createKey('auth1-other', []);
    expect(other.secret).not.toBe(secret);

    const one = await stack.api.get(`/api_keys/${res.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('secret');
    expect(one.body).toEqual({ ...res.body, secret: undefined });
    expect(one.text).not.toContain(secret);

    const list = await stack.api.get('/api_keys?limit=100');
    expect(list.status).toBe(200);
    expect(list.body.data.map((k: any) => k.id)).toContain(res.body.id);
    for (const k of list.body.data) expect(k).not.toHaveProperty('secret');
    expect(list.text).not.toContain(secret);
    expect(list.text).not.toContain(other.secret);
  });

  it('AUTH-1: the stored row holds a 32-byte HMAC of the secret, never the secret', async () => {
    const key = await createKey('auth1-stored', []);
    const row = await stack.rt.db('api_keys').where({ id: key.id }).first();
    const hmac = row.secret_hmac as Buffer;
    expect(Buffer.isBuffer(hmac)).toBe(true);
    expect(hmac).toHaveLength(32);
    expect(hmac.equals(Buffer.from(key.secret, 'base64url'))).toBe(false);
    expect(hmac.equals(createHash('sha256').update(key.secret).digest())).toBe(false);
    expect(hmac.equals(stack.rt.keyring.hmac('api-key-secret', key.secret))).toBe(true);
    const stored = JSON.stringify(row, (_k, v) =>
      v && v.type === 'Buffer' ? Buffer.from(v.data).toString('latin1') : v,
    );
    expect(stored).not.toContain(key.secret);
    expect(hmac.toString('latin1')).not.toContain(key.secret);
  });

  it('AUTH-1: a new key authenticates with its id and secret', async () => {
    const key = await createKey('auth1-works', ['read:llms']);
    const res = await stack.api.as(key).get('/llms');
    expect(res.status).toBe(200);
    const upper = await stack.api.as({ id: key.id.toUpperCase(), secret: key.secret }).get('/llms');
    expect(upper.status).toBe(200);
  });

  it('AUTH-1: unknown key id, wrong secret, malformed id and missing headers all answer 401 Invalid API key', async () => {
    // A missing (or empty) header is also named in `errors`; a wrong value never is.
    const missing = (header: string, what: string) => ({
      type: 'missing_header',
      path: header,
      message: `No ${header} header: send ${what} in it`,
    });
    const noId = missing('x-api-key', "the API key's id");
    const noSecret = missing('x-api-key-secret', "the API key's secret");
    const expected = (headers: Record<string, string>) => {
      const errors = [
        ...(headers['x-api-key'] ? [] : [noId]),
        ...(headers['x-api-key-secret'] ? [] : [noSecret]),
      ];
      return errors.length > 0 ? { ...INVALID, errors } : INVALID;
    };
    const key = await createKey('auth1-refused', ['read:llms']);
    const other = await createKey('auth1-refused-other', ['read:llms']);
    const attempts: Record<string, string>[] = [
      { 'x-api-key': '01890a5d-ac96-774b-bcce-b302099a8057', 'x-api-key-secret': key.secret },
      { 'x-api-key': key.id, 'x-api-key-secret': `${key.secret}x` },
      { 'x-api-key': key.id, 'x-api-key-secret': other.secret },
      { 'x-api-key': key.id, 'x-api-key-secret': stack.env.adminKeySecret },
      { 'x-api-key': 'not-a-uuid', 'x-api-key-secret': key.secret },
      { 'x-api-key': `${key.id}x`, 'x-api-key-secret': key.secret },
      { 'x-api-key': key.id },
      { 'x-api-key-secret': key.secret },
      {},
      { 'x-api-key': '', 'x-api-key-secret': '' },
    ];
    const anonymous = stack.api.as(undefined);
    for (const headers of attempts) {
      for (const res of [
        await anonymous.get('/llms', { ...headers, ...fromNewAddress() }),
        await anonymous.get(`/api_keys/${key.id}`, { ...headers, ...fromNewAddress() }),
        await anonymous.post('/llms', { name: 'x' }, { ...headers, ...fromNewAddress() }),
      ]) {
        expect({ headers, status: res.status, body: res.body }).toEqual({
          headers,
          status: 401,
          body: expected(headers),
        });
      }
    }
    expect(await count('llms')).toBe(0);
  });
});

describe('AUTH-2 permission strings and grants', () => {
  it('AUTH-2: permission strings are validated; the 400 names each bad one and nothing is stored', async () => {
    const before = await count('api_keys');
    const bad = ['read:widgets', 'fly:llms', 'read', 'read:llms:a:b', 'READ:llms', 'admin:llms'];
    const res = await stack.api.post('/api_keys', {
      name: 'auth2-invalid',
      permissions: ['read:llms', ...bad],
    });
    expect(res.status).toBe(400);
    for (const p of bad) expect(res.body.detail).toContain(p);
    expect(await count('api_keys')).toBe(before);

    const key = await createKey('auth2-valid', [
      'read:llms',
      'write:agents',
      'execute:chains',
      'read:prompts:my-prompt.v1',
      'write:api_keys',
      'read:routing_policies',
      'read:embedding_models',
      'read:text_splitters',
      'read:pipelines',
    ]);
    const patch = await stack.api.patch(`/api_keys/${key.id}`, {
      permissions: ['read:llms', 'execute:everything'],
    });
    expect(patch.status).toBe(400);
    expect(patch.body.detail).toContain('execute:everything');
    expect((await stack.api.get(`/api_keys/${key.id}`)).body.permissions).toEqual(key.body.permissions);
  });

  it('AUTH-2: read:llms covers every LLM, including ones created after the key', async () => {
    const reader = await createKey('auth2-all-reader', ['read:llms']);
    const early = await createLlm('auth2-early');
    const late = await createLlm('auth2-late');
    for (const id of [early, late]) {
      const res = await stack.api.as(reader).get(`/llms/${id}`);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(id);
    }
    const list = await stack.api.as(reader).get('/llms?limit=100');
    expect(list.body.data.map((l: any) => l.id)).toEqual(expect.arrayContaining([early, late]));
  });

  it('AUTH-2: read:llms:<id> covers that LLM only', async () => {
    const mine = await createLlm('auth2-granted');
    const other = await createLlm('auth2-not-granted');
    const reader = await createKey('auth2-one-reader', [`read:llms:${mine}`]);
    expect((await stack.api.as(reader).get(`/llms/${mine}`)).status).toBe(200);
    const hidden = await stack.api.as(reader).get(`/llms/${other}`);
    expect(hidden.status).toBe(404);
    const list = await stack.api.as(reader).get('/llms?limit=100');
    expect(list.body.data.map((l: any) => l.id)).toEqual([mine]);
    // A read grant is not a write or execute grant.
    expect((await stack.api.as(reader).patch(`/llms/${mine}`, { model: 'other' })).status).toBe(403);
    expect((await stack.api.as(reader).delete(`/llms/${mine}`)).status).toBe(403);
    expect((await stack.api.get(`/llms/${mine}`)).body.model).toBe('default');
  });

  it('AUTH-2: creating an LLM needs write:llms (403 otherwise, nothing stored)', async () => {
    const reader = await createKey('auth2-cannot-create', ['read:llms', 'execute:llms']);
    const before = await count('llms');
    const denied = await stack.api
      .as(reader)
      .post('/llms', { name: 'auth2-denied', endpoint: fake.url, model: 'm', api_key: 'k' });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toContain('write:llms');
    expect(await count('llms')).toBe(before);

    const writer = await createKey('auth2-can-create', ['write:llms']);
    const allowed = await stack.api
      .as(writer)
      .post('/llms', { name: 'auth2-allowed', endpoint: fake.url, model: 'm', api_key: 'k' });
    expect(allowed.status).toBe(201);

    const keyless = await createKey('auth2-no-key-grant', ['read:llms']);
    const noKey = await stack.api.as(keyless).post('/api_keys', { name: 'auth2-child' });
    expect(noKey.status).toBe(403);
  });
});

describe('AUTH-3 ownership', () => {
  it('AUTH-3: the key that creates an LLM may read, update, execute and delete it without read grants', async () => {
    const creator = await createKey('auth3-creator', ['write:llms']);
    const as = stack.api.as(creator);
    const id = await createLlm('auth3-owned', as, 'owned');

    const read = await as.get(`/llms/${id}`);
    expect(read.status).toBe(200);
    const list = await as.get('/llms?limit=100');
    expect(list.body.data.map((l: any) => l.id)).toEqual([id]);

    const patched = await as.patch(`/llms/${id}`, { description: 'mine' });
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe('mine');

    fake.script('owned', { text: 'owner may execute' });
    const query = await as.post(`/llms/${id}/query`, {
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
    });
    expect(query.status).toBe(200);
    expect(query.text).toBe('owner may execute');

    // Ownership is not written into the key's permissions.
    expect((await stack.api.get(`/api_keys/${creator.id}`)).body.permissions).toEqual(['write:llms']);

    expect((await as.delete(`/llms/${id}`)).status).toBe(204);
    expect((await stack.api.get(`/llms/${id}`)).status).toBe(404);
  });

  it('AUTH-3: another key with write:llms only cannot read an LLM it did not create (404, hidden from lists)', async () => {
    const creator = await createKey('auth3-creator-2', ['write:llms']);
    const id = await createLlm('auth3-private', stack.api.as(creator));
    const stranger = await createKey('auth3-stranger', ['write:llms']);
    const res = await stack.api.as(stranger).get(`/llms/${id}`);
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain(id);
    expect((await stack.api.as(stranger).get('/llms?limit=100')).body.data).toEqual([]);
  });

  it('AUTH-3/§1: a key without write or execute on an existing LLM gets 403; on a missing one 404', async () => {
    const id = await createLlm('auth3-guarded');
    const executionsBefore = await count('executions');
    for (const perms of [['read:llms'], [] as string[]]) {
      const key = await createKey(`auth3-guard-${perms.length}`, perms);
      const as = stack.api.as(key);
      const patch = await as.patch(`/llms/${id}`, { model: 'changed' });
      expect(patch.status).toBe(403);
      expect(patch.body.detail).toContain(id);
      expect((await as.delete(`/llms/${id}`)).status).toBe(403);
      const query = await as.post(`/llms/${id}/query`, { messages: [{ role: 'user', content: 'hi' }] });
      expect(query.status).toBe(403);
      expect((await as.get(`/llms/${id}`)).status).toBe(perms.length ? 200 : 404);
      const missing = '01890a5d-ac96-774b-bcce-b302099a8057';
      expect((await as.patch(`/llms/${missing}`, { model: 'changed' })).status).toBe(404);
      expect((await as.delete(`/llms/${missing}`)).status).toBe(404);
    }
    expect((await stack.api.get(`/llms/${id}`)).body.model).toBe('default');
    expect(await count('executions')).toBe(executionsBefore);
  });
});

describe('AUTH-4 bootstrap admin', () => {
  it('AUTH-4: the configured admin key works and holds every permission', async () => {
    const admin = stack.api;
    const self = await admin.get(`/api_keys/${stack.env.adminKeyId}`);
    expect(self.status).toBe(200);
    expect(self.body.permissions).toEqual(['admin']);

    const owner = await createKey('auth4-owner', ['write:llms', 'write:api_keys']);
    const foreignLlm = await createLlm('auth4-foreign', stack.api.as(owner), 'admin-run');
    const foreignKey = await createKey('auth4-foreign-key', [], stack.api.as(owner));
    expect((await admin.get(`/llms/${foreignLlm}`)).status).toBe(200);
    expect((await admin.get(`/api_keys/${foreignKey.id}`)).status).toBe(200);
    expect((await admin.patch(`/llms/${foreignLlm}`, { description: 'admin was here' })).status).toBe(200);
    fake.script('admin-run', { text: 'admin may execute' });
    const query = await admin.post(`/llms/${foreignLlm}/query`, {
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
    });
    expect(query.status).toBe(200);
    expect((await admin.patch(`/api_keys/${foreignKey.id}`, { permissions: ['write:agents'] })).status).toBe(
      200,
    );
    expect((await admin.delete(`/llms/${foreignLlm}`)).status).toBe(204);

    // Admin may grant anything, admin included.
    const second = await createKey('auth4-second-admin', ['admin', 'write:pipelines:p1']);
    expect((await stack.api.as(second).get(`/api_keys/${stack.env.adminKeyId}`)).status).toBe(200);

    const wrong = await admin
      .as({ id: stack.env.adminKeyId, secret: `${stack.env.adminKeySecret}!` })
      .get('/llms', fromNewAddress());
    expect(wrong.status).toBe(401);
  });
});

describe('AUTH-5 grant limits', () => {
  it('AUTH-5: creating or patching a key with wider grants than the creator holds → 403', async () => {
    const granter = await createKey('auth5-granter', ['write:api_keys', 'read:llms']);
    const as = stack.api.as(granter);
    const before = await count('api_keys');
    for (const permissions of [
      ['write:llms'],
      ['admin'],
      ['read:llms', 'execute:llms'],
      ['read:agents'],
      ['write:llms:01890a5d-ac96-774b-bcce-b302099a8057'],
    ]) {
      const res = await as.post('/api_keys', { name: `auth5-wide-${permissions.join('-')}`, permissions });
      expect({ permissions, status: res.status }).toEqual({ permissions, status: 403 });
      expect(res.body.detail).toContain(permissions[permissions.length - 1]);
    }
    expect(await count('api_keys')).toBe(before);

    const child = await createKey(
      'auth5-child',
      ['read:llms', 'read:llms:01890a5d-ac96-774b-bcce-b302099a8057', 'write:api_keys'],
      as,
    );
    const widen = await as.patch(`/api_keys/${child.id}`, { permissions: ['read:llms', 'write:llms'] });
    expect(widen.status).toBe(403);
    expect(widen.body.detail).toContain('write:llms');
    expect((await stack.api.get(`/api_keys/${child.id}`)).body.permissions).toEqual(child.body.permissions);

    const selfPromote = await as.patch(`/api_keys/${granter.id}`, { permissions: ['admin'] });
    expect(selfPromote.status).toBe(403);
    expect((await stack.api.get(`/api_keys/${granter.id}`)).body.permissions).toEqual([
      'write:api_keys',
      'read:llms',
    ]);

    // Narrowing is allowed.
    const narrow = await as.patch(`/api_keys/${child.id}`, { permissions: ['read:llms'] });
    expect(narrow.status).toBe(200);
    expect(narrow.body.permissions).toEqual(['read:llms']);
  });

  it('AUTH-5: a key can grant an id permission on an object it owns, not on one it does not', async () => {
    const owner = await createKey('auth5-owner', ['write:llms', 'write:api_keys']);
    const as = stack.api.as(owner);
    const owned = await createLlm('auth5-owned', as);
    const foreign = await createLlm('auth5-foreign');

    const shared = await createKey('auth5-shared', [`read:llms:${owned}`, `execute:llms:${owned}`], as);
    expect((await stack.api.as(shared).get(`/llms/${owned}`)).status).toBe(200);
    expect((await stack.api.as(shared).get(`/llms/${foreign}`)).status).toBe(404);

    const notOwned = await as.post('/api_keys', {
      name: 'auth5-not-owned',
      permissions: [`read:llms:${foreign}`],
    });
    expect(notOwned.status).toBe(403);
    expect(notOwned.body.detail).toContain(`read:llms:${foreign}`);
    const typeWide = await as.post('/api_keys', { name: 'auth5-type-wide', permissions: ['read:llms'] });
    expect(typeWide.status).toBe(403);

    // A key it created is an owned object too (the owner holds no read:api_keys grant).
    const viaPatch = await as.patch(`/api_keys/${shared.id}`, {
      permissions: [`read:llms:${owned}`, `read:api_keys:${shared.id}`],
    });
    expect(viaPatch.status).toBe(200);
    expect((await stack.api.as(shared).get(`/api_keys/${shared.id}`)).status).toBe(200);
  });
});

describe('§2 updating and deleting keys', () => {
  it('§2: PATCH updates name, description and permissions; description null clears; grants apply at once', async () => {
    const llm = await createLlm('patch-target');
    const key = await stack.api.post('/api_keys', { name: 'patch-me', description: 'old' });
    expect(key.status).toBe(201);
    expect(key.body.permissions).toEqual([]);
    const creds = { id: key.body.id as string, secret: key.body.secret as string };
    expect((await stack.api.as(creds).get(`/llms/${llm}`)).status).toBe(404);

    const res = await stack.api.patch(`/api_keys/${creds.id}`, {
      name: 'patched',
      description: 'new',
      permissions: ['read:llms'],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: creds.id,
      name: 'patched',
      description: 'new',
      permissions: ['read:llms'],
    });
    expect(res.body).not.toHaveProperty('secret');
    expect(res.body.created_at).toBe(key.body.created_at);
    expect((await stack.api.as(creds).get(`/llms/${llm}`)).status).toBe(200);

    const cleared = await stack.api.patch(`/api_keys/${creds.id}`, { description: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ name: 'patched', description: null, permissions: ['read:llms'] });
    expect((await stack.api.get(`/api_keys/${creds.id}`)).body.description).toBeNull();

    const revoked = await stack.api.patch(`/api_keys/${creds.id}`, { permissions: [] });
    expect(revoked.status).toBe(200);
    expect((await stack.api.as(creds).get(`/llms/${llm}`)).status).toBe(404);
  });

  it('§2: PATCH rejects unknown fields, wrong types and an empty body with 400 naming the field', async () => {
    const key = await createKey('patch-strict', ['read:llms']);
    for (const [body, named] of [
      [{ nmae: 'typo' }, 'nmae'],
      [{ secret: 'mine' }, 'secret'],
      [{ id: '01890a5d-ac96-774b-bcce-b302099a8057' }, 'id'],
      [{ name: 5 }, 'name'],
      [{ name: null }, 'name'],
      [{ name: '' }, 'name'],
      [{ permissions: 'read:llms' }, 'permissions'],
      [{ permissions: [1] }, 'permissions'],
      [{ description: 7 }, 'description'],
    ] as const) {
      const res = await stack.api.patch(`/api_keys/${key.id}`, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.detail).toContain(named);
    }
    expect((await stack.api.patch(`/api_keys/${key.id}`, {})).status).toBe(400);
    const unchanged = await stack.api.get(`/api_keys/${key.id}`);
    expect(unchanged.body).toEqual({ ...key.body, secret: undefined });
  });

  it('§2: DELETE answers 204 and the deleted key gets 401 at once', async () => {
    const key = await createKey('delete-me', ['read:llms']);
    expect((await stack.api.as(key).get('/llms')).status).toBe(200);
    const res = await stack.api.delete(`/api_keys/${key.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const after = await stack.api.as(key).get('/llms', fromNewAddress());
    expect(after.status).toBe(401);
    expect(after.body).toEqual(INVALID);
    expect((await stack.api.get(`/api_keys/${key.id}`)).status).toBe(404);
    expect((await stack.api.delete(`/api_keys/${key.id}`)).status).toBe(404);
    expect(await stack.rt.db('api_keys').where({ id: key.id }).first()).toBeUndefined();
  });

  it('§1: a duplicate key name → 409 "API key name already exists: <name>" on create and rename', async () => {
    await createKey('taken-name', []);
    const other = await createKey('free-name', []);
    const before = await count('api_keys');
    const dup = await stack.api.post('/api_keys', { name: 'taken-name' });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ detail: 'API key name already exists: taken-name' });
    expect(await count('api_keys')).toBe(before);
    const rename = await stack.api.patch(`/api_keys/${other.id}`, { name: 'taken-name' });
    expect(rename.status).toBe(409);
    expect(rename.body).toEqual({ detail: 'API key name already exists: taken-name' });
    expect((await stack.api.get(`/api_keys/${other.id}`)).body.name).toBe('free-name');
  });
});

describe('AUTH-6 failed-authentication limit', () => {
  it('AUTH-6: after 5 failures from an address, wrong credentials get 429 with Retry-After; valid ones still pass', async () => {
    const key = await createKey('auth6-victim', ['read:llms']);
    const address = { 'x-forwarded-for': '203.0.113.66' };
    const wrong = stack.api.as({ id: key.id, secret: 'wrong-secret' });
    for (let i = 1; i <= 5; i++) {
      const res = await wrong.get('/llms', address);
      expect({ attempt: i, status: res.status }).toEqual({ attempt: i, status: 401 });
    }
    for (const res of [
      await wrong.get('/llms', address),
      await stack.api.as(undefined).get('/llms', address),
      await stack.api
        .as({ id: '01890a5d-ac96-774b-bcce-b302099a8057', secret: 'x' })
        .get('/api_keys', address),
    ]) {
      expect(res.status).toBe(429);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(res.body.detail).toEqual(expect.any(String));
    }

    // Valid credentials from the same address are not blocked.
    const ok = await stack.api.as(key).get('/llms', address);
    expect(ok.status).toBe(200);
    expect((await stack.api.get('/api_keys', address)).status).toBe(200);
    // Still blocked for wrong credentials after the success.
    expect((await wrong.get('/llms', address)).status).toBe(429);
    // Counted per client address: another address is not affected.
    expect((await wrong.get('/llms', { 'x-forwarded-for': '203.0.113.67' })).status).toBe(401);
  });
});

describe('AUTH-5 changing or deleting a stronger key', () => {
  it('AUTH-5: a key with write:api_keys cannot strip or delete a key holding more than it (the admin key)', async () => {
    const manager = await createKey('auth5-manager', ['write:api_keys', 'read:api_keys', 'read:llms']);
    const as = stack.api.as(manager);
    const strip = await as.patch(`/api_keys/${stack.env.adminKeyId}`, { permissions: [] });
    expect(strip.status).toBe(403);
    expect(strip.body.detail).toContain('admin');
    expect((await as.delete(`/api_keys/${stack.env.adminKeyId}`)).status).toBe(403);
    expect((await stack.api.get(`/api_keys/${stack.env.adminKeyId}`)).body.permissions).toEqual(['admin']);

    // A key it could have created itself is fair game.
    const weaker = await createKey('auth5-weaker', ['read:llms']);
    expect((await as.patch(`/api_keys/${weaker.id}`, { description: 'managed' })).status).toBe(200);
    expect((await as.delete(`/api_keys/${weaker.id}`)).status).toBe(204);
  });
});
