// Composition root of the worker process (production: `npm run start:worker`): activities
// built from narrow deps, the prebuilt workflow bundle, the payload codec, a metrics port and
// the sweep that deletes execution content past its retention.
import { NativeConnection, Worker } from '@temporalio/worker';
import { createServer, type Server } from 'node:http';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { createActivities } from './activities';
import { loadConfig, requireProductionSettings } from './infra/config';
import { createLogger } from './infra/logger';
import { installTemporalMetrics } from './infra/temporal-metrics';
import { createRuntime, dataConverter, type Runtime } from './runtime';

export interface WorkerHandle {
  worker: Worker;
  metrics: Registry;
  /** Resolves when the worker stopped. */
  done: Promise<void>;
  stop(): Promise<void>;
}

const SWEEP_MS = 60_000;

function instrument<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  activities: T,
  histogram: Histogram<'activity' | 'outcome'>,
): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [
      name,
      async (...args: never[]) => {
        const end = histogram.startTimer({ activity: name });
        try {
          const result = await fn(...args);
          end({ outcome: 'success' });
          return result;
        } catch (err) {
          end({ outcome: 'failure' });
          throw err;
        }
      },
    ]),
  ) as T;
}

export async function startWorker(
  rt: Runtime,
  connection: NativeConnection,
  registry = new Registry(),
): Promise<WorkerHandle> {
  const { config } = rt;
  const activityDuration = new Histogram({
    name: 'agentry_activity_duration_seconds',
    help: 'Activity durations by type and outcome',
    labelNames: ['activity', 'outcome'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  const activities = instrument(
    createActivities({
      ...rt,
      contentRetentionSeconds: config.contentRetentionSeconds,
      traceTtlSeconds: config.traceTtlSeconds,
    }),
    activityDuration,
  );
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    ...(config.workflowBundlePath
      ? { workflowBundle: { codePath: config.workflowBundlePath } }
      : { workflowsPath: require.resolve('./workflows') }),
    activities,
    dataConverter: dataConverter(rt),
    maxHeartbeatThrottleInterval: '1 second',
    maxConcurrentActivityTaskExecutions: 100,
    maxConcurrentWorkflowTaskExecutions: 20,
    shutdownGraceTime: '30 seconds',
  });
  const sweep = setInterval(() => {
    rt.executions
      .deleteExpiredPayloads()
      .catch((err: unknown) => rt.logger.warn({ err }, 'content sweep failed'));
  }, SWEEP_MS);
  sweep.unref();
  const done = worker.run().finally(() => clearInterval(sweep));
  return {
    worker,
    metrics: registry,
    done,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  requireProductionSettings(config);
  const logger = createLogger(config.logLevel);
  const temporalMetrics = await installTemporalMetrics();
  const rt = await createRuntime(config, logger);
  const connection = await NativeConnection.connect({ address: config.temporalAddress! });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'agentry_worker_' });
  const metricsServer: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    Promise.all([registry.metrics(), temporalMetrics()]).then(
      ([own, temporal]) =>
        res.writeHead(200, { 'Content-Type': registry.contentType }).end(`${own}\n${temporal}`),
      () => res.writeHead(500).end(),
    );
  });
  // The metrics port first: a taken port fails the start before the worker polls.
  await new Promise<void>((resolve, reject) => {
    metricsServer.once('error', reject);
    metricsServer.listen(config.workerMetricsPort, resolve);
  });
  const handle = await startWorker(rt, connection, registry);
  const metricsPort = (metricsServer.address() as { port: number }).port;
  logger.info({ taskQueue: config.taskQueue, metricsPort }, 'worker running');
  const stop = (): void => {
    handle
      .stop()
      .catch((err: unknown) => logger.error({ err: (err as Error).message }, 'worker stopped with an error'));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await handle.done;
  metricsServer.close();
  await connection.close();
  await rt.close();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
