// Issue 33: a POST whose workflow started while the API's Redis stops answering (a partition that
// drops packets, a Redis that hangs: commands are neither answered nor refused) gets an answer
// in bounded time, never hangs. The API reaches Redis through a proxy that stops forwarding, both
// ways and on every connection, once the API remembers the started execution under its
// Idempotency-Key; the worker reaches Redis directly, so the execution itself runs and ends.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { NativeConnection } from '@temporalio/worker';
import { createLogger } from '../../infra/logger';
import { connectTemporal } from '../../infra/temporal-connection';
import { createRuntime, type Runtime } from '../../runtime';
import { startWorker, type WorkerHandle } from '../../start-worker';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { seedAgent, type SeededAgent } from '../helpers/agent-streams';
import { answerOf, parseNdjson } from '../helpers/http';
import { deleteRetentionSchedule } from '../helpers/schedules';
import { REDIS_URL } from '../helpers/services';
import { startStack, type Stack } from '../helpers/stack';

const MODEL = 'unanswered';
/** The API's write that names the started execution under the key (the claim's says null). */
const REMEMBER = /"executionId":"[0-9a-f-]{36}","claim"/;

/** A TCP proxy to Redis that goes silent, without closing anything, the first time a client sends `trigger`. */
class SilencingProxy {
  private silent = false;
  private triggered = false;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  constructor(
    private readonly target: URL,
    private readonly trigger: RegExp,
  ) {
    this.server = createServer((client) => this.pipe(client));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get isSilent(): boolean {
    return this.silent;
  }

  /** Redis answers again: the silenced connections are cut (their replies were lost), clients reconnect. */
  recover(): void {
    this.silent = false;
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.recover();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private pipe(client: Socket): void {
    const upstream = connect(Number(this.target.port || 6379), this.target.hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(from);
      from.on('data', (chunk: Buffer) => {
        if (from === client && !this.triggered && this.trigger.test(chunk.toString('latin1')))
          this.silent = this.triggered = true;
        if (!this.silent) to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => {
        this.sockets.delete(from);
        to.destroy();
      });
    }
  }
}

let proxy: SilencingProxy;
let stack: Stack;
let fake: FakeModelServer;
let agent: SeededAgent;
let workerRuntime: Runtime;
let workerConnection: NativeConnection;
let worker: WorkerHandle;

beforeAll(async () => {
  fake = await startFakeModelServer();
  proxy = new SilencingProxy(new URL(REDIS_URL), REMEMBER);
  stack = await startStack({ env: { REDIS_URL: await proxy.listen() }, worker: false });
  workerRuntime = await createRuntime({ ...stack.env.config, redisUrl: REDIS_URL }, createLogger('silent'));
  workerConnection = await connectTemporal(stack.env.config.temporal);
  worker = await startWorker(workerRuntime, workerConnection);
  agent = await seedAgent(stack.api, fake, { model: MODEL });
});

afterAll(async () => {
  proxy?.recover(); // a failed test may have left Redis silent for the API
  await stack?.stop();
  await worker?.stop();
  await deleteRetentionSchedule(stack.env.config.taskQueue, stack.temporal).catch(() => undefined);
  await workerConnection?.close();
  await workerRuntime?.close();
  await proxy?.close();
  await fake?.close();
});

/** POST /agents/{id}/execute with an Idempotency-Key, given up on after `giveUpMs`. */
async function execute(key: string, giveUpMs: number) {
  const started = Date.now();
  const res = await fetch(`${stack.url}/agents/${agent.agentId}/execute`, {
    method: 'POST',
    headers: {
      ...stack.api.headers(),
      'content-type': 'application/json',
      'x-pipeline-id': agent.pipelineId,
      'x-llm-id': agent.llmId,
      'idempotency-key': key,
    },
    body: JSON.stringify({ prompt: { question: 'Still there?' }, classification: 'internal' }),
    signal: AbortSignal.timeout(giveUpMs),
  });
  const text = await res.text();
  return {
    status: res.status,
    text,
    executionId: res.headers.get('x-agentry-execution-id'),
    ms: Date.now() - started,
  };
}

describe('a POST while Redis stops answering (issue 33)', () => {
  it('the workflow started, then Redis went silent: the client gets a 503 naming the execution within a minute, and its retry after Redis recovered gets the answer', async () => {
    fake.script(MODEL, { text: 'answered despite the silence' });
    const silenced = await execute('redis-goes-silent', 75_000);
    expect(proxy.isSilent).toBe(true);
    expect(silenced.status).toBe(503);
    expect(silenced.ms).toBeLessThan(60_000);
    expect(silenced.executionId).not.toBeNull();
    expect(fake.requestsFor(MODEL)).toHaveLength(1);

    proxy.recover();
    const retry = await execute('redis-goes-silent', 30_000);
    expect(retry.status).toBe(200);
    expect(retry.executionId).toBe(silenced.executionId);
    expect(answerOf(parseNdjson(retry.text))).toBe('answered despite the silence');
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
  }, 120_000);
});
