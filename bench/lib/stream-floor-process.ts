// A process of the streams floor (forked by bench/lib/stream-floor.ts): `api`, `worker` (the
// production variant's two processes, pub/sub on Redis) or `embedded` (both in one process, an
// EventEmitter for pub/sub, the client on the worker's connection with eager start). Settings
// from the environment: FLOOR_TASK_QUEUE, FLOOR_WORKFLOW_BUNDLE, FLOOR_MODEL_URL, FLOOR_REDIS_URL,
// TEMPORAL_ADDRESS.
// Tells its parent `{ready: url}` over IPC; SIGTERM stops it.
import { Client, type Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { TEMPORAL_ADDRESS } from './env';
import { startFloorApi } from './stream-floor-api';
import { memoryBus, redisBus } from './stream-floor-bus';
import { startFloorWorker } from './stream-floor-worker';

export type FloorRole = 'api' | 'worker' | 'embedded';

Runtime.install({ logger: new DefaultLogger('WARN') });

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

async function main(role: FloorRole): Promise<void> {
  const taskQueue = required('FLOOR_TASK_QUEUE');
  const bus = role === 'embedded' ? memoryBus() : await redisBus(required('FLOOR_REDIS_URL'));
  const connection = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
  const stops: (() => Promise<void>)[] = [];
  let url = '';
  if (role !== 'api') {
    const bundle = required('FLOOR_WORKFLOW_BUNDLE');
    const worker = await startFloorWorker(connection, taskQueue, bundle, bus, required('FLOOR_MODEL_URL'));
    stops.push(worker.stop);
  }
  if (role !== 'worker') {
    // A NativeConnection as Agentry's API has (infra/temporal-connection.ts).
    const client = new Client({ connection: connection as unknown as Connection });
    const server = await startFloorApi({ bus, client, taskQueue, eager: role === 'embedded' });
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    stops.unshift(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
  }
  process.once('SIGTERM', () => {
    void (async () => {
      for (const stop of stops) await stop().catch(() => undefined);
      await bus.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
      process.exit(0);
    })();
  });
  process.send?.({ ready: url });
}

main(process.argv[2] as FloorRole).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
