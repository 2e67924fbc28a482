// DX-6 codec server for the Temporal UI: admin-only Bearer authorisation, the capability URL the
// UI is configured with (its exact requests replayed), encode/decode round trip with the
// product's payload codec, and CORS for the configured UI origins only.
import { KeyRing } from '../../infra/crypto';
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;
let admin: string;
let nonAdmin: string;

const UI_ORIGIN = 'http://localhost:8233';
const OTHER_ORIGIN = 'https://ui.example.com';
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const plain = {
  payloads: [{ metadata: { encoding: b64('json/plain') }, data: b64('{"a":1}') }],
};

beforeAll(async () => {
  stack = await startStack({
    worker: false,
    env: { AGENTRY_CODEC_CORS_ORIGINS: `${UI_ORIGIN}, ${OTHER_ORIGIN}`, AGENTRY_AUTH_FAILURE_LIMIT: '100' },
  });
  admin = `Bearer ${stack.env.adminKeyId}.${stack.env.adminKeySecret}`;
  const key = await stack.api.post('/api_keys', {
    name: 'not-admin',
    permissions: ['read:llms', 'write:llms', 'execute:llms', 'read:api_keys', 'write:api_keys'],
  });
  expect(key.status).toBe(201);
  nonAdmin = `Bearer ${key.body.id}.${key.body.secret}`;
});

afterAll(async () => {
  await stack?.stop();
});

async function codec(op: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.url}/temporal-codec/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

describe('DX-6 codec server', () => {
  it('DX-6: encode then decode round-trips a payload; the encoded form is binary/encrypted', async () => {
    const encoded = await codec('encode', plain, { authorization: admin });
    expect(encoded.status).toBe(200);
    expect(encoded.body.payloads).toHaveLength(1);
    const [payload] = encoded.body.payloads;
    expect(Buffer.from(payload.metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
    const data = Buffer.from(payload.data, 'base64');
    expect(data.includes(Buffer.from('{"a":1}'))).toBe(false);
    expect(data.includes(Buffer.from('json/plain'))).toBe(false);

    const decoded = await codec('decode', encoded.body, { authorization: admin });
    expect(decoded.status).toBe(200);
    expect(decoded.body).toEqual(plain);
    expect(Buffer.from(decoded.body.payloads[0].data, 'base64').toString()).toBe('{"a":1}');

    // The same codec as the Temporal client and worker use.
    const [viaRuntime] = await stack.rt.codec.decode([
      { metadata: { encoding: Buffer.from(payload.metadata.encoding, 'base64') }, data },
    ]);
    expect(Buffer.from(viaRuntime!.data!).toString()).toBe('{"a":1}');
  });

  it('DX-6: several payloads keep their order; an unencrypted payload decodes to itself', async () => {
    const many = {
      payloads: ['1', '"two"', '{"three":3}'].map((d) => ({
        metadata: { encoding: b64('json/plain'), messageType: b64('x') },
        data: b64(d),
      })),
    };
    const encoded = await codec('encode', many, { authorization: admin });
    expect(encoded.status).toBe(200);
    const decoded = await codec('decode', encoded.body, { authorization: admin });
    expect(decoded.body).toEqual(many);
    const passthrough = await codec('decode', plain, { authorization: admin });
    expect(passthrough.status).toBe(200);
    expect(passthrough.body).toEqual(plain);
  });

  it('DX-6: a tampered encrypted payload or a malformed body → 400, never 500', async () => {
    const encoded = await codec('encode', plain, { authorization: admin });
    const data = Buffer.from(encoded.body.payloads[0].data, 'base64');
    data.writeUInt8(data.readUInt8(data.length - 1) ^ 1, data.length - 1);
    const tampered = { payloads: [{ ...encoded.body.payloads[0], data: data.toString('base64') }] };
    const res = await codec('decode', tampered, { authorization: admin });
    expect(res.status).toBe(400);
    expect(typeof res.body.detail).toBe('string');
    for (const body of [
      {},
      { payloads: 'x' },
      { payloads: [null] },
      { payloads: [{ data: 5 }] },
      { payloads: [{ metadata: { encoding: 1 } }] },
      '{"payloads": [',
      '[]',
    ]) {
      const bad = await codec('encode', body, { authorization: admin });
      expect({ body, status: bad.status }).toEqual({ body, status: 400 });
    }
  });

  it('DX-6: only an admin key as Authorization: Bearer <id>.<secret> may use it (401 bad credentials, 403 not admin)', async () => {
    const [id, secret] = [stack.env.adminKeyId, stack.env.adminKeySecret];
    const refused: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${id}.${secret}x` },
      { authorization: `Bearer ${id}` },
      { authorization: `Bearer ${id}:${secret}` },
      { authorization: `Basic ${b64(`${id}:${secret}`)}` },
      { authorization: `Bearer 01890a5d-ac96-774b-bcce-b302099a8057.${secret}` },
      { authorization: `Bearer not-a-uuid.${secret}` },
      { 'x-api-key': id, 'x-api-key-secret': secret },
    ];
    for (const headers of refused) {
      for (const op of ['encode', 'decode']) {
        const res = await codec(op, plain, headers);
        expect({ headers, op, status: res.status }).toEqual({ headers, op, status: 401 });
        expect(res.body).toEqual({ detail: 'Invalid API key' });
      }
    }
    for (const op of ['encode', 'decode']) {
      const res = await codec(op, plain, { authorization: nonAdmin });
      expect(res.status).toBe(403);
    }
    expect((await codec('decode', plain, { authorization: admin })).status).toBe(200);
    expect(
      (await codec('decode', plain, { authorization: `Bearer ${id.toUpperCase()}.${secret}` })).status,
    ).toBe(200);
  });

  it('DX-6: CORS preflight from a configured origin echoes it; other origins get no CORS headers', async () => {
    for (const origin of [UI_ORIGIN, OTHER_ORIGIN]) {
      const res = await fetch(`${stack.url}/temporal-codec/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type,x-namespace',
        },
      });
      expect(res.status).toBeLessThan(300);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase();
      for (const h of ['authorization', 'content-type', 'x-namespace']) expect(allowed).toContain(h);
      expect(res.headers.get('vary')).toContain('Origin');
    }
    for (const origin of ['https://evil.example', 'http://localhost:8234', 'null']) {
      const res = await fetch(`${stack.url}/temporal-codec/decode`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const post = await codec('decode', plain, { authorization: admin, origin: UI_ORIGIN });
    expect(post.status).toBe(200);
    expect(post.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    const denied = await codec('decode', plain, { origin: UI_ORIGIN });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    const foreign = await codec('decode', plain, { authorization: admin, origin: 'https://evil.example' });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('DX-6 capability URL (what the Temporal UI calls)', () => {
  const capability = (): string => stack.rt.keyring.codecCapability();

  // What the UI (2.x, src/lib/services/data-encoder.ts) sends: `fetch(endpoint + '/decode')`, POST,
  // headers Content-Type: application/json and X-Namespace, no Authorization (passAccessToken off),
  // cross-origin, so the browser first sends a preflight for those two headers.
  async function asTheUi(cap: string, body: unknown, address = '203.0.113.9') {
    const url = `${stack.url}/temporal-codec/${cap}/decode`;
    const preflight = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: UI_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
        'x-forwarded-for': address,
      },
    });
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        origin: UI_ORIGIN,
        'content-type': 'application/json',
        'x-namespace': 'default',
        'x-forwarded-for': address,
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { preflight, status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }

  it("DX-6: the UI's preflight and decode request through the capability URL get decoded payloads", async () => {
    const encoded = await codec('encode', plain, { authorization: admin });
    const res = await asTheUi(capability(), encoded.body);
    expect(res.preflight.status).toBe(204);
    expect(res.preflight.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(res.preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const allowed = res.preflight.headers.get('access-control-allow-headers')!.toLowerCase();
    for (const h of ['content-type', 'x-namespace']) expect(allowed).toContain(h);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(res.body).toEqual(plain);
    // The capability's own encode, for the UI's forms (signal/start input).
    const again = await fetch(`${stack.url}/temporal-codec/${capability()}/encode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(plain),
    });
    expect(again.status).toBe(200);
    const [payload] = ((await again.json()) as typeof plain).payloads;
    expect(Buffer.from(payload!.metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
  });

  it('DX-6/AUTH-6: nothing decodes without the capability; each wrong one is a counted failed authentication', async () => {
    const encoded = await codec('encode', plain, { authorization: admin });
    const cap = capability();
    const address = '203.0.113.10';
    const wrong = [
      new KeyRing('another-application-secret-0123456789abcdef').codecCapability(),
      cap.slice(0, -1),
      `${cap}A`,
      `${cap.slice(0, -1)}${cap.endsWith('A') ? 'B' : 'A'}`,
      Buffer.from(cap, 'base64url').toString('hex'),
      'x',
    ];
    for (const attempt of wrong) {
      const res = await asTheUi(attempt, encoded.body, address);
      expect({ attempt, status: res.status }).toEqual({ attempt, status: 401 });
      expect(res.body).toEqual({ detail: 'Invalid API key' });
      expect(JSON.stringify(res.body)).not.toContain(b64('{"a":1}'));
    }
    expect((await stack.rt.failureLimiter.get(address))?.consumedPoints).toBe(wrong.length);
    // The UI's request without any capability hits the admin-only endpoint: refused too.
    const bare = await fetch(`${stack.url}/temporal-codec/decode`, {
      method: 'POST',
      headers: { origin: UI_ORIGIN, 'content-type': 'application/json', 'x-namespace': 'default' },
      body: JSON.stringify(encoded.body),
    });
    expect(bare.status).toBe(401);
    // An admin key in place of the capability is not a capability.
    const keyAsPath = await asTheUi(`${stack.env.adminKeyId}.${stack.env.adminKeySecret}`, encoded.body);
    expect(keyAsPath.status).toBe(401);
  });

  it('AUTH-6: past the failed-authentication limit a wrong capability gets 429, the right one still decodes', async () => {
    const address = '203.0.113.11';
    await stack.rt.failureLimiter.penalty(address, 100);
    const wrong = await asTheUi(capability().slice(1), plain, address);
    expect(wrong.status).toBe(429);
    expect(wrong.body.payloads).toBeUndefined();
    expect((await asTheUi(capability(), plain, address)).status).toBe(200);
  });
});

describe('AUTH-6 on the codec server', () => {
  it('AUTH-6: failed codec authentications count against the client address like any other', async () => {
    const address = '198.51.100.77';
    const res = await codec('decode', plain, {
      authorization: 'Bearer nobody.nothing',
      'x-forwarded-for': address,
    });
    expect(res.status).toBe(401);
    const counted = await stack.rt.failureLimiter.get(address);
    expect(counted?.consumedPoints).toBe(1);
  });
});
