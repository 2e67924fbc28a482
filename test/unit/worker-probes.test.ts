// Issue 36: the worker's probes. /readyz follows the SDK workers' states only; /livez fails for a
// failed worker and for an event loop blocked past its bound (a real block, through the watchdog).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { watchEventLoop } from '../../infra/event-loop-watchdog';
import { createLogger } from '../../infra/logger';
import { createWorkerProbeServer, type WorkerStates } from '../../infra/worker-probes';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function blockLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin: nothing else in this process runs meanwhile
  }
}

const silent = createLogger('info', new Writable({ write: (_c, _e, done) => done() }));

describe('worker probes (issue 36)', () => {
  const servers: Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  async function probeServer(states: () => WorkerStates | undefined, loopDelayMs: () => number) {
    const server = createWorkerProbeServer({
      metrics: async () => 'agentry_model_streams 0\n',
      contentType: 'text/plain; version=0.0.4',
      states,
      loopDelayMs,
      maxLoopDelayMs: 1000,
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return async (path: string) => {
      const res = await fetch(base + path);
      return { status: res.status, body: await res.text() };
    };
  }

  it('/readyz is 503 until every served SDK worker runs, and again once one drains', async () => {
    let states: WorkerStates | undefined;
    const get = await probeServer(
      () => states,
      () => 0,
    );
    expect((await get('/readyz')).status).toBe(503);
    states = { executions: 'RUNNING', tasks: 'INITIALIZED' };
    expect((await get('/readyz')).status).toBe(503);
    states = { executions: 'RUNNING', tasks: 'RUNNING' };
    const ready = await get('/readyz');
    expect(ready).toEqual({ status: 200, body: expect.stringContaining('"status":"ready"') });
    states = { tasks: 'RUNNING' };
    expect((await get('/readyz')).status).toBe(200);
    states = { executions: 'DRAINING', tasks: 'RUNNING' };
    expect((await get('/readyz')).status).toBe(503);
    // Draining is not dying: the pod is left alone while its streams finish.
    expect((await get('/livez')).status).toBe(200);
  });

  it('/livez fails for a failed worker and for a loop delayed past its bound', async () => {
    let states: WorkerStates = { executions: 'RUNNING', tasks: 'RUNNING' };
    let delay = 20;
    const get = await probeServer(
      () => states,
      () => delay,
    );
    expect((await get('/livez')).status).toBe(200);
    delay = 1500;
    const blocked = await get('/livez');
    expect(blocked.status).toBe(503);
    expect(JSON.parse(blocked.body)).toMatchObject({ eventLoopDelayMs: 1500, maxEventLoopDelayMs: 1000 });
    delay = 20;
    states = { executions: 'FAILED', tasks: 'STOPPED' };
    expect(JSON.parse((await get('/livez')).body)).toMatchObject({
      status: 'not live',
      failed: ['executions'],
    });
    expect((await get('/metrics')).body).toBe('agentry_model_streams 0\n');
    expect((await get('/other')).status).toBe(404);
  });

  it('/livez answered after a real block of the loop says 503', async () => {
    const watchdog = watchEventLoop({ registry: new Registry(), logger: silent });
    try {
      const get = await probeServer(
        () => ({ executions: 'RUNNING' }),
        () => watchdog.recentDelayMs(),
      );
      await sleep(250);
      expect((await get('/livez')).status).toBe(200);
      const answer = get('/livez');
      blockLoop(1300);
      expect((await answer).status).toBe(503);
    } finally {
      watchdog.stop();
    }
  });
});
