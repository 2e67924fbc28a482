// One map from errors to HTTP (api/error-handler.ts): an execution that fails before its first
// byte is answered by the same handler as any other error, in the shape of the route's family
// (SPEC §1, seed 002's `/api/...`, OpenAI's for `/v1/...`), with Retry-After on a 503.
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ExecutionFailed, TooManyRequests } from '../../domain/errors';
import { errorHandler } from '../../api/error-handler';
import { requestContext } from '../../api/request-id';
import { createLogger } from '../../infra/logger';

let server: Server;
let base: string;
let thrown: Error;

beforeAll(async () => {
  const app = express();
  app.use(requestContext(createLogger('silent')));
  app.use(() => {
    throw thrown;
  });
  app.use(errorHandler);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

async function answer(path: string, err: Error) {
  thrown = err;
  const res = await fetch(`${base}${path}`, { method: 'POST' });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

describe('the error map', () => {
  it.each([
    ['/agents/a/execute', { detail: 'Model server failed: 500 boom' }],
    ['/api/prompts/execute', { success: false, error: 'Model server failed: 500 boom' }],
    [
      '/v1/responses',
      {
        error: {
          message: 'Model server failed: 500 boom',
          type: 'server_error',
          param: null,
          code: 'upstream_error',
        },
      },
    ],
  ])('a failed execution on %s answers its own status in that family’s shape', async (path, body) => {
    expect(await answer(path, new ExecutionFailed('Model server failed: 500 boom', 502))).toEqual({
      status: 502,
      retryAfter: null,
      body,
    });
  });

  it.each(['/agents/a/execute', '/api/prompts/execute', '/v1/responses'])(
    'an execution failed on an unavailable dependency (%s) says when to try again',
    async (path) => {
      const res = await answer(
        path,
        new ExecutionFailed('Execution failed: a dependency is unavailable', 503),
      );
      expect([res.status, res.retryAfter]).toEqual([503, '5']);
    },
  );

  it('a cancelled execution is 499, and an error with its own Retry-After keeps it', async () => {
    expect((await answer('/agents/a/execute', new ExecutionFailed('Execution cancelled', 499))).status).toBe(
      499,
    );
    const limited = await answer('/agents/a/execute', new TooManyRequests('slow down', 17));
    expect([limited.status, limited.retryAfter]).toEqual([429, '17']);
  });
});
