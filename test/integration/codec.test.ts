// DX-6 codec server for the Temporal UI: admin-only Bearer authorisation, encode/decode round
// trip with the product's payload codec, and CORS for the configured UI origins only.
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
