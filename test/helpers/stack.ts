// The whole product in the test process (integration tests): runtime on the real services, the
// API on an ephemeral port and, unless disabled, a worker on the file's own task queue (and so its
// own content retention schedule, deleted on stop so schedules do not pile up in the dev server).
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { startApi } from '../../api/server';
import { createLogger } from '../../infra/logger';
import { connectTemporal } from '../../infra/temporal-connection';
import { connectTemporalClient, createRuntime, type Runtime } from '../../runtime';
import { startWorker, type WorkerHandle } from '../../start-worker';
import { testEnv, type TestEnv } from './config';
import { createTestDatabase, type TestDatabase } from './database';
import { deleteRetentionSchedule } from './schedules';
import { Api } from './http';

export interface Stack {
  api: Api;
  url: string;
  rt: Runtime;
  temporal: Client;
  env: TestEnv;
  database: TestDatabase;
  /** Every log line written by the API and worker of this stack. */
  logs: string[];
  worker?: WorkerHandle;
  stop(): Promise<void>;
}

export async function startStack(
  options: {
    env?: Record<string, string>;
    worker?: boolean;
    logLevel?: string;
    /** A database of the caller's (e.g. PGlite, test/helpers/embedded-database.ts); dropped by stop. */
    database?: TestDatabase;
  } = {},
): Promise<Stack> {
  const database = options.database ?? (await createTestDatabase());
  const env = testEnv(database.url, options.env);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger(options.logLevel ?? 'info', sink);
  const rt = await createRuntime(env.config, logger);
  let connection: NativeConnection | undefined;
  let worker: WorkerHandle | undefined;
  if (options.worker !== false) {
    // TEMPORAL_ADDRESS unless the caller's env names another server (the browser test's, a TLS proxy).
    connection = await connectTemporal(env.config.temporal);
    worker = await startWorker(rt, connection);
  }
  // As in `npm start`: with a worker here, the client shares its connection and starts eagerly.
  const temporal = await connectTemporalClient(rt, connection);
  const server: Server = await startApi(rt, temporal, { eagerStart: worker !== undefined });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    api: new Api(url, { id: env.adminKeyId, secret: env.adminKeySecret }),
    url,
    rt,
    temporal,
    env,
    database,
    logs,
    ...(worker ? { worker } : {}),
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await worker?.stop();
      if (worker) await deleteRetentionSchedule(env.config.taskQueue, temporal);
      await (connection ?? temporal.connection).close();
      await rt.close();
      await database.drop();
    },
  };
}
