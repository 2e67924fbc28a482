// SPEC §17: rotating the application secret. A deployment restarted with a new
// AGENTRY_APPLICATION_SECRET and the old one as AGENTRY_APPLICATION_SECRET_PREVIOUS still
// authenticates existing keys and decrypts stored LLM keys; without the previous secret it cannot.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startApi } from '../../api/server';
import { loadConfig } from '../../infra/config';
import { createLogger } from '../../infra/logger';
import { createRuntime, type Runtime } from '../../runtime';
import { TEST_APPLICATION_SECRET } from '../helpers/config';
import { Api } from '../helpers/http';
import { startStack, type Stack } from '../helpers/stack';

const NEW_SECRET = 'rotated-application-secret-abcdefghijklmnop';

let stack: Stack;
let rotated: Runtime;
let server: Server;

beforeAll(async () => {
  stack = await startStack({ worker: false });
});

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await rotated?.close();
  await stack?.stop();
});

async function restartWith(env: Record<string, string>): Promise<Api> {
  rotated = await createRuntime(loadConfig({ ...stack.env.env, ...env }), createLogger('silent'));
  server = await startApi(rotated, stack.temporal);
  return new Api(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

it('§17: after rotation, keys and LLM api keys made under the previous secret keep working', async () => {
  const key = await stack.api.post('/api_keys', { name: 'before-rotation', permissions: ['read:llms'] });
  const llm = await stack.api.post('/llms', {
    name: 'rotating',
    endpoint: 'http://127.0.0.1:9/v1',
    model: 'm',
    api_key: 'sk-old-era',
  });
  expect(key.status).toBe(201);
  expect(llm.status).toBe(201);

  const api = await restartWith({
    AGENTRY_APPLICATION_SECRET: NEW_SECRET,
    AGENTRY_APPLICATION_SECRET_PREVIOUS: TEST_APPLICATION_SECRET,
  });
  const res = await api.as({ id: key.body.id, secret: key.body.secret }).get(`/llms/${llm.body.id}`);
  expect(res.status).toBe(200);
  expect((await rotated.llms.getForCall(llm.body.id))?.apiKey).toBe('sk-old-era');

  // New writes use the new secret: a deployment that only knows the old one cannot read them.
  await rotated.llms.update(llm.body.id, { apiKey: 'sk-new-era' });
  await expect(stack.rt.llms.getForCall(llm.body.id)).rejects.toThrow(/unknown application secret/);
  expect((await rotated.llms.getForCall(llm.body.id))?.apiKey).toBe('sk-new-era');
});

it('§17: without the previous secret, keys made under it no longer authenticate', async () => {
  const key = await stack.api.post('/api_keys', { name: 'orphaned-by-rotation', permissions: [] });
  server.closeAllConnections();
  server.close();
  await rotated.close();
  const api = await restartWith({ AGENTRY_APPLICATION_SECRET: NEW_SECRET });
  expect((await api.as({ id: key.body.id, secret: key.body.secret }).get('/api_keys')).status).toBe(401);
});
