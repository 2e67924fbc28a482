// LLM-1 registry through the real API and PostgreSQL: the stored shape, validation, the
// encrypted api_key (never returned, never logged), update, delete and name conflicts.
import { startStack, type Stack } from '../helpers/stack';
import { sleep, waitFor } from '../helpers/wait';

let stack: Stack;

const FIELDS = [
  'created_at',
  'description',
  'endpoint',
  'has_api_key',
  'id',
  'model',
  'name',
  'provider',
  'resumable',
  'updated_at',
];
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every LLM api_key and API key secret this file sends, to look for in responses and logs. */
const secrets: string[] = [];
const apiKey = (label: string): string => {
  const key = `sk-${label}-${Math.random().toString(36).slice(2)}-never-shown`;
  secrets.push(key);
  return key;
};

beforeAll(async () => {
  // The most verbose level, so that nothing a debug line might carry escapes the check below.
  stack = await startStack({ worker: false, logLevel: 'trace' });
  secrets.push(stack.env.adminKeySecret);
});

afterAll(async () => {
  await stack?.stop();
});

async function create(body: Record<string, unknown>): Promise<any> {
  const res = await stack.api.post('/llms', body);
  expect({ status: res.status, detail: res.body?.detail }).toEqual({ status: 201, detail: undefined });
  return res.body;
}

const count = async (): Promise<number> =>
  Number(((await stack.rt.db('llms').count({ n: '*' })) as { n: string }[])[0]!.n);

describe('LLM-1 create and read', () => {
  it('LLM-1: create → 201 with exactly the public fields, has_api_key true and no api_key', async () => {
    const key = apiKey('openai');
    const res = await stack.api.post('/llms', {
      name: 'gpt',
      description: 'OpenAI',
      endpoint: 'https://api.openai.com/v1',
      model: 'gpt-4.1-mini',
      api_key: key,
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(FIELDS);
    expect(res.body).toMatchObject({
      name: 'gpt',
      description: 'OpenAI',
      endpoint: 'https://api.openai.com/v1',
      model: 'gpt-4.1-mini',
      provider: 'openai',
      has_api_key: true,
    });
    expect(res.body.id).toMatch(UUID_V7);
    expect(res.body.created_at).toMatch(ISO);
    expect(res.body.updated_at).toBe(res.body.created_at);
    expect(Math.abs(Date.parse(res.body.created_at) - Date.now())).toBeLessThan(60_000);
    expect(res.text).not.toContain(key);
    expect(res.text).not.toContain('"api_key"');

    const one = await stack.api.get(`/llms/${res.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body);
    expect(one.text).not.toContain(key);
    const list = await stack.api.get('/llms?limit=100');
    expect(list.body.data).toContainEqual(res.body);
    expect(list.text).not.toContain(key);
  });

  it('LLM-1: provider is derived from the endpoint host', async () => {
    const cases: [string, string][] = [
      ['https://api.openai.com/v1', 'openai'],
      ['https://API.OpenAI.com/v1/', 'openai'],
      ['https://api.anthropic.com/v1', 'anthropic'],
      ['https://my-resource.openai.azure.com/openai/v1', 'azure'],
      ['http://localhost:11434/v1', 'custom'],
      ['http://127.0.0.1:8080/v1', 'custom'],
      ['https://openai.com.evil.example/v1', 'custom'],
      ['https://notopenai.com/v1', 'custom'],
    ];
    for (const [i, [endpoint, provider]] of cases.entries()) {
      const llm = await create({ name: `provider-${i}`, endpoint, model: 'm', api_key: apiKey('p') });
      expect({ endpoint, provider: llm.provider }).toEqual({ endpoint, provider });
    }
  });

  it('LLM-1: description is optional and null when omitted', async () => {
    const llm = await create({ name: 'plain', endpoint: 'http://localhost:9/v1', model: 'm', api_key: 'x' });
    expect(llm.description).toBeNull();
  });

  it('issue 27: resumable is off unless asked; set on create, changed by PATCH, returned by GET; not a boolean → 400 naming it', async () => {
    const base = { endpoint: 'http://localhost:9/v1', model: 'm', api_key: 'x' };
    expect((await create({ name: 'not-resumable', ...base })).resumable).toBe(false);
    const llm = await create({ name: 'resumable', ...base, resumable: true });
    expect(llm.resumable).toBe(true);
    expect((await stack.api.get(`/llms/${llm.id}`)).body.resumable).toBe(true);
    expect(await stack.rt.llms.getForCall(llm.id)).toMatchObject({ resumable: true });
    const off = await stack.api.patch(`/llms/${llm.id}`, { resumable: false });
    expect(off.status).toBe(200);
    expect(off.body.resumable).toBe(false);
    expect((await stack.api.get(`/llms/${llm.id}`)).body.resumable).toBe(false);
    const bad = await stack.api.post('/llms', { name: 'bad-resumable', ...base, resumable: 'yes' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('resumable');
  });

  it('LLM-1: api_key is required and non-empty; endpoint must be an http(s) URL; 400 names the field', async () => {
    const valid = { name: 'invalid-cases', endpoint: 'https://api.openai.com/v1', model: 'm', api_key: 'k' };
    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...valid, api_key: undefined }, 'api_key'],
      [{ ...valid, api_key: '' }, 'api_key'],
      [{ ...valid, api_key: null }, 'api_key'],
      [{ ...valid, api_key: 12345 }, 'api_key'],
      [{ ...valid, endpoint: undefined }, 'endpoint'],
      [{ ...valid, endpoint: '' }, 'endpoint'],
      [{ ...valid, endpoint: 'not a url' }, 'endpoint'],
      [{ ...valid, endpoint: 'api.openai.com/v1' }, 'endpoint'],
      [{ ...valid, endpoint: 'ftp://api.openai.com/v1' }, 'endpoint'],
      [{ ...valid, endpoint: 'javascript:alert(1)' }, 'endpoint'],
      [{ ...valid, endpoint: 'file:///etc/passwd' }, 'endpoint'],
      [{ ...valid, name: undefined }, 'name'],
      [{ ...valid, name: '' }, 'name'],
      [{ ...valid, name: '   ' }, 'name'],
      [{ ...valid, model: undefined }, 'model'],
      [{ ...valid, model: '' }, 'model'],
      [{ ...valid, provider: 'openai' }, 'provider'],
      [{ ...valid, has_api_key: false }, 'has_api_key'],
      [{ ...valid, id: '01890a5d-ac96-774b-bcce-b302099a8057' }, 'id'],
    ];
    for (const [body, field] of cases) {
      const res = await stack.api.post('/llms', body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect({ body, detail: res.body.detail }).toEqual({ body, detail: expect.stringContaining(field) });
    }
    expect(await count()).toBe(before);
  });

  it('LLM-1: the api_key is stored encrypted; only getForCall decrypts it', async () => {
    const key = apiKey('stored');
    const llm = await create({
      name: 'stored',
      endpoint: 'https://api.openai.com/v1',
      model: 'm',
      api_key: key,
    });
    const row = await stack.rt.db('llms').where({ id: llm.id }).first();
    const cipher = row.api_key_cipher as Buffer;
    expect(Buffer.isBuffer(cipher)).toBe(true);
    expect(cipher.includes(Buffer.from(key))).toBe(false);
    expect(cipher.toString('latin1')).not.toContain(key);
    expect(cipher.length).toBeGreaterThan(key.length);
    for (const value of Object.values(row)) if (typeof value === 'string') expect(value).not.toContain(key);
    // The same key twice encrypts differently (random IV).
    const twin = await create({
      name: 'stored-twin',
      endpoint: 'https://api.openai.com/v1',
      model: 'm',
      api_key: key,
    });
    const twinRow = await stack.rt.db('llms').where({ id: twin.id }).first();
    expect((twinRow.api_key_cipher as Buffer).equals(cipher)).toBe(false);
    expect(await stack.rt.llms.getForCall(llm.id)).toEqual({
      endpoint: 'https://api.openai.com/v1',
      model: 'm',
      apiKey: key,
      resumable: false,
    });
  });
});

describe('LLM-1 update and delete', () => {
  it('LLM-1: PATCH replaces the api_key (never returned) and re-derives the provider from a new endpoint', async () => {
    const oldKey = apiKey('old');
    const llm = await create({
      name: 'patchable',
      endpoint: 'http://localhost:9/v1',
      model: 'm1',
      api_key: oldKey,
    });
    expect(llm.provider).toBe('custom');
    await sleep(5);

    const newKey = apiKey('new');
    const res = await stack.api.patch(`/llms/${llm.id}`, { api_key: newKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(FIELDS);
    expect(res.text).not.toContain(newKey);
    expect(res.body).toMatchObject({ has_api_key: true, endpoint: 'http://localhost:9/v1', model: 'm1' });
    expect(res.body.updated_at > llm.updated_at).toBe(true);
    expect(res.body.created_at).toBe(llm.created_at);
    expect((await stack.rt.llms.getForCall(llm.id))?.apiKey).toBe(newKey);

    const moved = await stack.api.patch(`/llms/${llm.id}`, {
      endpoint: 'https://api.anthropic.com/v1',
      model: 'claude',
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      endpoint: 'https://api.anthropic.com/v1',
      provider: 'anthropic',
      model: 'claude',
    });
    expect(await stack.rt.llms.getForCall(llm.id)).toEqual({
      endpoint: 'https://api.anthropic.com/v1',
      model: 'claude',
      apiKey: newKey,
      resumable: false,
    });
    expect((await stack.api.get(`/llms/${llm.id}`)).body).toEqual(moved.body);
  });

  it('LLM-1: PATCH sets and clears the description; name null and bad fields → 400 and nothing changes', async () => {
    const llm = await create({
      name: 'describable',
      endpoint: 'http://localhost:9/v1',
      model: 'm',
      api_key: 'k',
    });
    const described = await stack.api.patch(`/llms/${llm.id}`, { description: 'now described' });
    expect(described.status).toBe(200);
    expect(described.body.description).toBe('now described');
    const cleared = await stack.api.patch(`/llms/${llm.id}`, { description: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.description).toBeNull();
    expect((await stack.api.get(`/llms/${llm.id}`)).body.description).toBeNull();

    const current = (await stack.api.get(`/llms/${llm.id}`)).body;
    for (const [body, field] of [
      [{ name: null }, 'name'],
      [{ name: '' }, 'name'],
      [{ endpoint: null }, 'endpoint'],
      [{ endpoint: 'ftp://x' }, 'endpoint'],
      [{ model: null }, 'model'],
      [{ api_key: '' }, 'api_key'],
      [{ api_key: null }, 'api_key'],
      [{ provider: 'openai' }, 'provider'],
      [{ has_api_key: false }, 'has_api_key'],
      [{ created_at: '2020-01-01T00:00:00Z' }, 'created_at'],
    ] as const) {
      const res = await stack.api.patch(`/llms/${llm.id}`, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect({ body, detail: res.body.detail }).toEqual({ body, detail: expect.stringContaining(field) });
    }
    expect((await stack.api.patch(`/llms/${llm.id}`, {})).status).toBe(400);
    expect((await stack.api.get(`/llms/${llm.id}`)).body).toEqual(current);
    expect((await stack.rt.llms.getForCall(llm.id))?.apiKey).toBe('k');
  });

  it('LLM-1: DELETE → 204, then GET and a second DELETE → 404 and the list no longer shows it', async () => {
    const llm = await create({ name: 'doomed', endpoint: 'http://localhost:9/v1', model: 'm', api_key: 'k' });
    const res = await stack.api.delete(`/llms/${llm.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const gone = await stack.api.get(`/llms/${llm.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.detail).toContain(llm.id);
    expect((await stack.api.delete(`/llms/${llm.id}`)).status).toBe(404);
    expect((await stack.api.patch(`/llms/${llm.id}`, { model: 'x' })).status).toBe(404);
    expect((await stack.api.get('/llms?limit=100')).body.data.map((l: any) => l.id)).not.toContain(llm.id);
    expect(await stack.rt.llms.getForCall(llm.id)).toBeNull();
    // The name is free again.
    await create({ name: 'doomed', endpoint: 'http://localhost:9/v1', model: 'm', api_key: 'k' });
  });

  it('§1: a duplicate name → 409 "LLM name already exists: <name>" on create and rename', async () => {
    await create({ name: 'unique-llm', endpoint: 'http://localhost:9/v1', model: 'm', api_key: 'k' });
    const other = await create({
      name: 'other-llm',
      endpoint: 'http://localhost:9/v1',
      model: 'm',
      api_key: 'k',
    });
    const before = await count();
    const dup = await stack.api.post('/llms', {
      name: 'unique-llm',
      endpoint: 'https://api.openai.com/v1',
      model: 'x',
      api_key: 'k2',
    });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ detail: 'LLM name already exists: unique-llm' });
    expect(await count()).toBe(before);
    const rename = await stack.api.patch(`/llms/${other.id}`, { name: 'unique-llm', model: 'changed' });
    expect(rename.status).toBe(409);
    expect(rename.body).toEqual({ detail: 'LLM name already exists: unique-llm' });
    expect((await stack.api.get(`/llms/${other.id}`)).body).toEqual(other);
    // Renaming to its own name is not a conflict.
    expect((await stack.api.patch(`/llms/${other.id}`, { name: 'other-llm' })).status).toBe(200);
  });
});

describe('LLM-1 secrets stay secret', () => {
  it('LLM-1/§16: no LLM api_key or API key secret appears in any log line', async () => {
    // An API key secret too, and failing requests that carry secrets in their bodies.
    const created = await stack.api.post('/api_keys', { name: 'log-check', permissions: ['read:llms'] });
    expect(created.status).toBe(201);
    secrets.push(created.body.secret);
    expect((await stack.api.as(created.body).get('/llms')).status).toBe(200);
    const leaky = apiKey('leaky');
    expect(
      (await stack.api.post('/llms', { name: 'leaky', endpoint: 'bad', model: 'm', api_key: leaky })).status,
    ).toBe(400);
    expect((await stack.api.request('POST', '/llms', `{"api_key": "${leaky}", `)).status).toBe(400);
    const last = 'llm-secrets-last-request';
    expect(
      (await stack.api.as({ id: created.body.id, secret: leaky }).get('/llms', { 'x-request-id': last }))
        .status,
    ).toBe(401);

    // Every line is written once the last request's own line is.
    await waitFor(
      () =>
        stack.logs
          .join('')
          .split('\n')
          .some((line) => line.includes(last) && line.includes('"msg":"request"')),
      { what: 'the log line of the last request' },
    );
    const logs = stack.logs.join('');
    expect(logs).toContain('"msg":"request"');
    for (const secret of secrets) expect(logs).not.toContain(secret);
    expect(secrets.length).toBeGreaterThan(10);
  });
});
