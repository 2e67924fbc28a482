// SPEC §1 and §16 at the HTTP edge: x-request-id, error bodies, strict JSON bodies on every
// endpoint that takes one, path ids, unknown routes, and the unauthenticated operational endpoints.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { parseNdjson, type TestResponse } from '../helpers/http';
import { startStack, type Stack } from '../helpers/stack';
import { until } from '../helpers/wait';

let stack: Stack;
let fake: FakeModelServer;
let llmId: string;
let keyId: string;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const VERSION = (
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
).version;
const LLM_API_KEY = 'sk-conventions-secret-value';
const question = { messages: [{ role: 'user', content: 'hello' }] };

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  const llm = await stack.api.post('/llms', {
    name: 'conventions',
    endpoint: fake.url,
    model: 'conv',
    api_key: LLM_API_KEY,
  });
  expect(llm.status).toBe(201);
  llmId = llm.body.id;
  const key = await stack.api.post('/api_keys', { name: 'conventions-key', permissions: ['read:llms'] });
  expect(key.status).toBe(201);
  keyId = key.body.id;
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

const logLinesOf = (requestId: string): any[] =>
  stack.logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
    .filter((l) => l.requestId === requestId);

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['api_keys', 'llms', 'executions', 'execution_payloads']) {
    out[table] = Number(((await stack.rt.db(table).count({ n: '*' })) as { n: string }[])[0]!.n);
  }
  return out;
}

function expectErrorBody(res: TestResponse<any>, status: number): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/json');
  expect(typeof res.body.detail).toBe('string');
  expect(Object.keys(res.body).every((k) => k === 'detail' || k === 'errors')).toBe(true);
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

describe('§1 x-request-id', () => {
  it('§1: every response carries an x-request-id: success, 400, 401, 404, 409 and streams', async () => {
    fake.script('conv', { text: 'streamed answer' });
    const responses: [string, TestResponse<any>, number][] = [
      ['root', await stack.api.as(undefined).get('/'), 200],
      ['list', await stack.api.get('/llms'), 200],
      ['created', await stack.api.post('/api_keys', { name: 'rid-created' }), 201],
      ['invalid', await stack.api.post('/llms', {}), 400],
      ['unauthenticated', await stack.api.as(undefined).get('/llms'), 401],
      ['not found', await stack.api.get('/llms/not-a-uuid'), 404],
      ['unknown route', await stack.api.get('/no/such/route'), 404],
      ['conflict', await stack.api.post('/api_keys', { name: 'rid-created' }), 409],
      ['metrics', await stack.api.as(undefined).get('/metrics'), 200],
      ['stream', await stack.api.post(`/llms/${llmId}/query`, question), 200],
    ];
    const seen = new Set<string>();
    for (const [what, res, status] of responses) {
      expect({ what, status: res.status }).toEqual({ what, status });
      const id = res.headers.get('x-request-id');
      expect({ what, id }).toEqual({ what, id: expect.stringMatching(UUID) });
      seen.add(id!);
    }
    expect(seen.size).toBe(responses.length);
    const stream = responses[responses.length - 1]![1];
    expect(stream.headers.get('content-type')).toContain('application/x-ndjson');
    expect(parseNdjson(stream.text).pop()).toMatchObject({ type: 'done' });
  });

  it('§1: a valid inbound x-request-id (1–128 visible ASCII) is echoed, also on errors and streams', async () => {
    fake.script('conv', { text: 'echoed' });
    const values = ['a', 'client-req-0001', 'A.b_c~d!e#f$%&*+/=?^`{|}', 'x'.repeat(128)];
    for (const value of values) {
      const headers = { 'x-request-id': value };
      for (const res of [
        await stack.api.get('/llms', headers),
        await stack.api.as(undefined).get('/llms', headers),
        await stack.api.get('/llms/not-a-uuid', headers),
        await stack.api.post('/llms', { name: 5 }, headers),
      ]) {
        expect(res.headers.get('x-request-id')).toBe(value);
      }
    }
    const stream = await stack.api.post(`/llms/${llmId}/query`, question, { 'x-request-id': 'stream-rid-1' });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('x-request-id')).toBe('stream-rid-1');
  });

  it('§1: an invalid inbound x-request-id (too long, spaces, non-ASCII, empty) is replaced by a UUID', async () => {
    for (const value of ['y'.repeat(129), 'has space', 'caf\u00e9', 'tab\there', '']) {
      const res = await stack.api.get('/llms', { 'x-request-id': value });
      expect(res.status).toBe(200);
      const id = res.headers.get('x-request-id');
      expect({ value, id }).toEqual({ value, id: expect.stringMatching(UUID) });
    }
  });

  it('§1/§16: the request id is on the log lines of its request', async () => {
    const ok = `log-ok-${Date.now()}`;
    const denied = `log-401-${Date.now()}`;
    const failed = `log-400-${Date.now()}`;
    expect((await stack.api.get(`/llms/${llmId}`, { 'x-request-id': ok })).status).toBe(200);
    expect((await stack.api.as(undefined).get('/llms', { 'x-request-id': denied })).status).toBe(401);
    expect((await stack.api.post('/llms', { name: 1 }, { 'x-request-id': failed })).status).toBe(400);
    for (const [id, status] of [
      [ok, 200],
      [denied, 401],
      [failed, 400],
    ] as const) {
      const lines = await until(
        () => {
          const l = logLinesOf(id);
          return l.some((line) => line.msg === 'request') ? l : undefined;
        },
        { what: `the request log line of ${id}` },
      );
      expect(lines.find((l) => l.msg === 'request')).toMatchObject({ requestId: id, status });
    }
    const okLine = logLinesOf(ok).find((l) => l.msg === 'request');
    expect(okLine.route).toBe('/llms/:id');
    expect(JSON.stringify(stack.logs)).not.toContain(stack.env.adminKeySecret);
  });
});

describe('§1 request bodies', () => {
  const endpoints = () => [
    {
      method: 'POST',
      path: '/api_keys',
      valid: { name: 'body-key' },
      wrongType: { name: 5 },
      field: 'name',
    },
    {
      method: 'PATCH',
      path: `/api_keys/${keyId}`,
      valid: { description: 'changed' },
      wrongType: { permissions: 'read:llms' },
      field: 'permissions',
    },
    {
      method: 'POST',
      path: '/llms',
      valid: { name: 'body-llm', endpoint: fake.url, model: 'conv', api_key: 'k' },
      wrongType: { name: 'body-llm', endpoint: fake.url, model: 7, api_key: 'k' },
      field: 'model',
    },
    {
      method: 'PATCH',
      path: `/llms/${llmId}`,
      valid: { model: 'changed' },
      wrongType: { endpoint: ['http://x'] },
      field: 'endpoint',
    },
    {
      method: 'POST',
      path: `/llms/${llmId}/query`,
      valid: question,
      wrongType: { messages: 'hello' },
      field: 'messages',
    },
  ];

  it('§1: a schema failure answers {detail, errors[]} with type, path and message per problem', async () => {
    const res = await stack.api.post('/llms', { name: 5, endpoint: 'ftp://x', api_key: '', extra: true });
    expectErrorBody(res, 400);
    expect(Array.isArray(res.body.errors)).toBe(true);
    for (const e of res.body.errors) {
      expect(Object.keys(e).sort()).toEqual(['message', 'path', 'type']);
      expect(typeof e.type).toBe('string');
      expect(typeof e.path).toBe('string');
      expect(typeof e.message).toBe('string');
    }
    const paths = res.body.errors.map((e: any) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['name', 'endpoint', 'api_key', 'model', 'extra']));
    expect(res.body.errors).toContainEqual({
      type: 'type',
      path: 'name',
      message: expect.stringContaining('name'),
    });
    expect(res.body.errors).toContainEqual({
      type: 'additionalProperties',
      path: 'extra',
      message: expect.stringContaining('extra'),
    });
    expect(res.body.errors).toContainEqual({
      type: 'required',
      path: 'model',
      message: expect.stringContaining('model'),
    });
    for (const p of ['name', 'endpoint', 'api_key', 'model', 'extra']) expect(res.body.detail).toContain(p);

    const nested = await stack.api.post(`/llms/${llmId}/query`, {
      messages: [
        { role: 'user', content: 'ok' },
        { role: 'robot', content: 1 },
      ],
    });
    expectErrorBody(nested, 400);
    expect(nested.body.errors.map((e: any) => e.path)).toEqual(
      expect.arrayContaining(['messages[1].role', 'messages[1].content']),
    );
  });

  it('§1: bad bodies on every endpoint → 400/413 naming the problem, never 422 or 500, and nothing changes', async () => {
    fake.reset();
    const before = await counts();
    const keyBefore = (await stack.api.get(`/api_keys/${keyId}`)).body;
    const llmBefore = (await stack.api.get(`/llms/${llmId}`)).body;
    const big = 'x'.repeat(1024 * 1024 + 10);

    for (const ep of endpoints()) {
      const send = (body: unknown, headers: Record<string, string> = {}) =>
        stack.api.request(ep.method, ep.path, body, headers);
      const cases: [string, Promise<TestResponse<any>>, number, string | undefined][] = [
        ['malformed JSON', send('{"name": '), 400, 'Request body is not valid JSON'],
        ['trailing garbage', send('{"name": "a"} x'), 400, 'Request body is not valid JSON'],
        ['JSON null', send('null'), 400, undefined],
        ['JSON string', send('"text"'), 400, undefined],
        ['JSON number', send('42'), 400, undefined],
        ['JSON array', send('[]'), 400, undefined],
        ['wrong type', send(ep.wrongType), 400, ep.field],
        ['unknown field', send({ ...ep.valid, colour: 'red' }), 400, 'colour'],
        ['too large', send({ ...ep.valid, padding: big }), 413, undefined],
        ['text/plain', send(JSON.stringify(ep.valid), { 'content-type': 'text/plain' }), 400, undefined],
        ['form', send('name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 400, undefined],
        ['no body', stack.api.request(ep.method, ep.path), 400, undefined],
        [
          'no content type',
          fetch(`${stack.url}${ep.path}`, {
            method: ep.method,
            headers: stack.api.headers(),
            body: Buffer.from(JSON.stringify(ep.valid)),
          }).then(async (r) => ({
            status: r.status,
            headers: r.headers,
            text: '',
            body: await r.json(),
          })),
          400,
          undefined,
        ],
      ];
      for (const [what, pending, status, named] of cases) {
        const res = await pending;
        const where = `${ep.method} ${ep.path}: ${what}`;
        expect({ where, status: res.status }).toEqual({ where, status });
        expectErrorBody(res, status);
        if (named)
          expect({ where, detail: res.body.detail }).toEqual({
            where,
            detail: expect.stringContaining(named),
          });
      }
    }
    expect(await counts()).toEqual(before);
    expect((await stack.api.get(`/api_keys/${keyId}`)).body).toEqual(keyBefore);
    expect((await stack.api.get(`/llms/${llmId}`)).body).toEqual(llmBefore);
    expect(fake.requests).toHaveLength(0);
  });

  it('§18: the 413 names the 1 MB limit; field limits inside it are 400s', async () => {
    const res = await stack.api.post('/api_keys', { name: 'big', description: 'x'.repeat(3000) });
    expectErrorBody(res, 400);
    expect(res.body.detail).toContain('description');
    const huge = await stack.api.post('/llms', { name: 'x'.repeat(2 * 1024 * 1024) });
    expectErrorBody(huge, 413);
    expect(huge.body.detail).toContain(String(1024 * 1024));
  });
});

describe('§1 ids and routes', () => {
  it('§1: a path id that is not a valid id → 404, never 500', async () => {
    fake.reset();
    const missing = '01890a5d-ac96-774b-bcce-b302099a8057';
    const bad = [
      'not-a-uuid',
      '123',
      '00000000-0000-0000-0000-000000000000',
      `${missing}0`,
      '%20',
      'a'.repeat(500),
      '%E0%A4%A',
    ];
    for (const id of [...bad, missing]) {
      for (const [method, p, body] of [
        ['GET', `/llms/${id}`, undefined],
        ['PATCH', `/llms/${id}`, { model: 'x' }],
        ['DELETE', `/llms/${id}`, undefined],
        ['POST', `/llms/${id}/query`, question],
        ['GET', `/api_keys/${id}`, undefined],
        ['PATCH', `/api_keys/${id}`, { name: 'x' }],
        ['DELETE', `/api_keys/${id}`, undefined],
      ] as const) {
        const res = await stack.api.request(method, p, body);
        const where = `${method} ${p.slice(0, 80)}`;
        expect({ where, status: res.status }).toEqual({ where, status: 404 });
        expectErrorBody(res, 404);
      }
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('§1: an unknown route → 404 JSON (401 first when unauthenticated)', async () => {
    for (const [method, p] of [
      ['GET', '/nope'],
      ['DELETE', '/llms'],
      ['PUT', `/llms/${llmId}`],
      ['POST', `/api_keys/${keyId}/rotate`],
      ['GET', '/llms/a/b/c'],
    ] as const) {
      const res = await stack.api.request(method, p);
      expectErrorBody(res, 404);
      expect(res.body.detail).toContain(p);
    }
    const anonymous = await stack.api.as(undefined).get('/nope');
    expectErrorBody(anonymous, 401);
    expect(anonymous.body.detail).toBe('Invalid API key');
  });

  it('§1: a request without its key headers is told which header is missing, in each error shape', async () => {
    const anonymous = stack.api.as(undefined);
    const noSecret = await anonymous.get('/llms', { 'x-api-key': '01890a5d-ac96-774b-bcce-b302099a8057' });
    expect(noSecret.status).toBe(401);
    expect(noSecret.body).toEqual({
      detail: 'Invalid API key',
      errors: [
        {
          type: 'missing_header',
          path: 'x-api-key-secret',
          message: "No x-api-key-secret header: send the API key's secret in it",
        },
      ],
    });
    const seed = await anonymous.get('/api/v1/chains');
    expect(seed.status).toBe(401);
    expect(seed.body).toMatchObject({ success: false, error: 'Invalid API key' });
    expect(seed.body.details.map((d: { path: string }) => d.path)).toEqual(['x-api-key', 'x-api-key-secret']);
    // The OpenAI-compatible routes take the key as a Bearer token: `param` names that header.
    const openAi = await anonymous.post('/v1/responses', {});
    expect(openAi.status).toBe(401);
    expect(openAi.body).toEqual({
      error: {
        message: 'Invalid API key',
        type: 'invalid_request_error',
        param: 'authorization',
        code: 'invalid_api_key',
      },
    });
  });
});

describe('§16 operational endpoints', () => {
  const anonymous = () => stack.api.as(undefined);

  it('§1: GET / answers the name and version without auth', async () => {
    const res = await anonymous().get('/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Agentry server', version: VERSION });
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('§16: /healthz and /readyz answer without auth; readyz checks database, Redis and Temporal', async () => {
    expect((await anonymous().get('/healthz')).status).toBe(200);
    const ready = await anonymous().get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ database: 'ok', redis: 'ok', temporal: 'ok' });
  });

  it('§16: /metrics counts requests by route template and status, never by id', async () => {
    expect((await stack.api.get(`/llms/${llmId}`)).status).toBe(200);
    expect((await stack.api.get(`/api_keys/${keyId}`)).status).toBe(200);
    expect((await stack.api.get('/llms/not-a-uuid-metrics')).status).toBe(404);
    expect((await stack.api.get('/secret-path-metrics')).status).toBe(404);
    const text = (
      await until(
        async () => {
          const r = await anonymous().get('/metrics');
          return r.text.includes('route="/llms/:id",status="404"') ? r : undefined;
        },
        { what: 'the 404 of /llms/:id in /metrics' },
      )
    ).text;
    expect(text).toMatch(/agentry_http_requests_total\{method="GET",route="\/llms\/:id",status="200"\} \d+/);
    expect(text).toMatch(
      /agentry_http_requests_total\{method="GET",route="\/api_keys\/:id",status="200"\} \d+/,
    );
    expect(text).toMatch(/agentry_http_requests_total\{method="GET",route="\/llms\/:id",status="404"\} \d+/);
    expect(text).toContain('agentry_http_request_duration_seconds_bucket');
    for (const forbidden of [
      llmId,
      keyId,
      'not-a-uuid-metrics',
      'secret-path-metrics',
      stack.env.adminKeyId,
    ]) {
      expect(text).not.toContain(forbidden);
    }
    const routes = new Set(
      [...text.matchAll(/^agentry_http_requests_total\{[^}]*route="([^"]*)"/gm)].map((m) => m[1]!),
    );
    const doc = (await anonymous().get('/openapi.json')).body;
    const templates = new Set(Object.keys(doc.paths).map((p: string) => p.replace(/\{(\w+)\}/g, ':$1')));
    for (const route of routes) expect(route === 'unmatched' || templates.has(route)).toBe(true);
    expect(routes.has('/llms/:id')).toBe(true);
  });

  it('§16: /openapi.json is OpenAPI 3.1 with the routes and the request schemas that validate', async () => {
    const res = await anonymous().get('/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe(VERSION);
    for (const p of ['/llms', '/llms/{id}', '/llms/{id}/query', '/api_keys', '/api_keys/{id}']) {
      expect(doc.paths).toHaveProperty([p]);
    }
    expect(Object.keys(doc.paths).some((p) => p.includes('/:'))).toBe(false); // no Express-style :param segments
    expect(Object.keys(doc.paths['/api_keys']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/llms/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
    const create = doc.paths['/llms'].post.requestBody.content['application/json'].schema;
    expect(create.required).toEqual(expect.arrayContaining(['name', 'endpoint', 'model', 'api_key']));
    expect(create.additionalProperties).toBe(false);
    const query = doc.paths['/llms/{id}/query'].post;
    expect(query.requestBody.content['application/json'].schema.required).toEqual(['messages']);
    expect(query.parameters).toContainEqual(
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    );
    expect(doc.paths['/'].get.security).toEqual([]);
  });

  it('§16: /docs serves the interactive reference as HTML', async () => {
    const res = await fetch(`${stack.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html.toLowerCase()).toContain('swagger');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });
});
