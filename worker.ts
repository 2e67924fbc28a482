// Composition root of the worker process (production: `npm run start:worker`): activities
// built from narrow deps, the prebuilt workflow bundle, the payload codec, a metrics port and
// the sweep that deletes execution content past its retention.
import {
  startTelemetry,
  shutdownTelemetry,
  temporalActivityInterceptors,
  temporalWorkflowSinks,
  WORKFLOW_INTERCEPTORS_MODULE,
} from './infra/telemetry';
// Tracing (when OTEL_* asks for it) must start before express, pg and http load.
if (require.main === module) startTelemetry('agentry-worker');
import { NativeConnection, Worker } from '@temporalio/worker';
import { createServer, type Server } from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { createActivities } from './activities';
import { loadConfig, requireProductionSettings } from './infra/config';
import { activityMetricsInterceptor, createWorkerMetrics } from './infra/activity-metrics';
import { createLogger, temporalLogger } from './infra/logger';
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

export async function startWorker(
  rt: Runtime,
  connection: NativeConnection,
  registry = new Registry(),
): Promise<WorkerHandle> {
  const { config } = rt;
  const activities = createActivities({
    ...rt,
    contentRetentionSeconds: config.contentRetentionSeconds,
    traceTtlSeconds: config.traceTtlSeconds,
    defaultLlmId: config.defaultLlmId,
  });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    ...(config.workflowBundlePath
      ? { workflowBundle: { codePath: config.workflowBundlePath } }
      : { workflowsPath: require.resolve('./workflows') }),
    activities,
    // Metrics (and, when on, OpenTelemetry spans) around every activity; the workflow side of
    // tracing is in the bundle (infra/telemetry-workflow.ts) and exports through `sinks`.
    interceptors: {
      activity: [
        activityMetricsInterceptor(createWorkerMetrics(registry)),
        ...temporalActivityInterceptors(),
      ],
      workflowModules: config.workflowBundlePath ? [] : [WORKFLOW_INTERCEPTORS_MODULE],
    },
    sinks: temporalWorkflowSinks(),
    dataConverter: dataConverter(rt),
    maxHeartbeatThrottleInterval: '1 second',
    maxConcurrentActivityTaskExecutions: 100,
    maxConcurrentWorkflowTaskExecutions: 20,
    // One poll of each kind (sticky and normal): on a small machine more polls only add wake-ups
    // (docs/decisions.md, "Worker polls").
    maxConcurrentWorkflowTaskPolls: config.workflowTaskPolls,
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
  const temporalMetrics = await installTemporalMetrics({ logger: temporalLogger(logger) });
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
  await shutdownTelemetry();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
