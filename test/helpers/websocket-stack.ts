// What the WebSocket e2e tests share (issue 34 item 3): API and worker processes on a fresh
// database, the fake model server with an LLM on it, two application keys with `execute:llms`, a
// cutting proxy in front of the API, and clients of /v1/responses on either.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startCuttingProxy, type CuttingProxy } from './cutting-proxy';
import type { Api } from './http';
import { startProcessStack, type ProcessStack } from './processes';
import { openSession, type Session } from './websocket-session';

export interface WebSocketStack {
  stack: ProcessStack;
  fake: FakeModelServer;
  proxy: CuttingProxy;
  /** The fake's model name, and the LLM registered for it. */
  model: string;
  llm: string;
  /** `<key id>.<secret>` of two keys, and an HTTP client authenticated as the first. */
  key: string;
  otherKey: string;
  owner: Api;
  /** ws://…/v1/responses of the API (or of another port, the proxy's), with a query. */
  url(port?: number, query?: string): string;
  /** A session on the API with a key's Bearer header. */
  open(apiKey?: string, query?: string): Promise<Session>;
  /** A `response.create` of the LLM with these fields. */
  create(fields: Record<string, unknown>): Record<string, unknown>;
  stop(): Promise<void>;
}

export const bearer = (apiKey: string): Record<string, string> => ({ authorization: `Bearer ${apiKey}` });

export async function startWebSocketStack(model: string): Promise<WebSocketStack> {
  const fake = await startFakeModelServer();
  const stack = await startProcessStack();
  const llm = `ws-${model}`;
  const registered = await stack.admin.post('/llms', { name: llm, endpoint: fake.url, model, api_key: 'x' });
  expect(registered.status).toBe(201);
  const keys = await Promise.all(
    ['ws-app', 'ws-other-app'].map(async (name) => {
      const res = await stack.admin.post('/api_keys', { name, permissions: ['execute:llms'] });
      expect(res.status).toBe(201);
      return { id: res.body.id as string, secret: res.body.secret as string };
    }),
  );
  const [mine, theirs] = keys as [(typeof keys)[0], (typeof keys)[0]];
  const proxy = await startCuttingProxy(stack.api.port!);
  const key = `${mine.id}.${mine.secret}`;
  const url = (port = stack.api.port!, query = '') => `ws://127.0.0.1:${port}/v1/responses${query}`;
  return {
    stack,
    fake,
    proxy,
    model,
    llm,
    key,
    otherKey: `${theirs.id}.${theirs.secret}`,
    owner: stack.admin.as(mine),
    url,
    open: (apiKey = key, query = '') => openSession(url(undefined, query), bearer(apiKey)),
    create: (fields) => ({ type: 'response.create', model: llm, ...fields }),
    async stop() {
      await proxy.close();
      await stack.stop();
      await fake.close();
    },
  };
}
