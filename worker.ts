// Composition root of the worker process (production: `npm run start:worker`): configuration,
// the runtime, the metrics and probe port (infra/worker-probes.ts) with its event-loop watchdog,
// and a worker on the queues it serves (start-worker.ts) until a signal stops it.
import { startTelemetry, shutdownTelemetry } from './infra/telemetry';
// Tracing (when OTEL_* asks for it) must start before express, pg and http load.
if (require.main === module) startTelemetry('agentry-worker');
import { Registry, collectDefaultMetrics } from 'prom-client';
import { loadConfig, requireProductionSettings } from './infra/config';
import { createLogger, temporalLogger } from './infra/logger';
import { connectTemporal } from './infra/temporal-connection';
import { watchEventLoop } from './infra/event-loop-watchdog';
import { installTemporalMetrics } from './infra/temporal-metrics';
import { createWorkerProbeServer } from './infra/worker-probes';
import { createRuntime, type Runtime } from './runtime';
import { startWorker, type WorkerHandle } from './start-worker';

async function main(): Promise<void> {
  const config = loadConfig();
  requireProductionSettings(config);
  const logger = createLogger(config.logLevel);
  const temporalMetrics = await installTemporalMetrics({ logger: temporalLogger(logger) });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'agentry_worker_' });
  const watchdog = watchEventLoop({ registry, logger });
  // Filled once the runtime and the workers exist; the probes read them from the start.
  const started: { handle?: WorkerHandle; rt?: Runtime } = {};
  const probes = createWorkerProbeServer({
    metrics: async () =>
      (await Promise.all([registry.metrics(), started.rt?.metrics.metrics() ?? '', temporalMetrics()])).join(
        '\n',
      ),
    contentType: registry.contentType,
    states: () => started.handle?.states(),
    loopDelayMs: () => watchdog.recentDelayMs(),
    maxLoopDelayMs: config.worker.maxLoopDelayMs,
  });
  // The port first: a taken port fails the start at once, and while the start connects (and
  // migrates, unless AGENTRY_MIGRATE_ON_START=false) /livez answers and /readyz says 503.
  await new Promise<void>((resolve, reject) => {
    probes.once('error', reject);
    probes.listen(config.workerMetricsPort, resolve);
  });
  const rt = await createRuntime(config, logger);
  started.rt = rt;
  const connection = await connectTemporal(config.temporal);
  const running = await startWorker(rt, connection, registry);
  started.handle = running;
  const metricsPort = (probes.address() as { port: number }).port;
  const { queues, shutdownGraceMs } = config.worker;
  logger.info({ taskQueue: config.taskQueue, queues, metricsPort }, 'worker running');
  const stop = (): void => {
    logger.info({ shutdownGraceMs }, 'worker stopping: no new tasks; running ones may finish');
    running
      .stop()
      .catch((err: unknown) => logger.error({ err: (err as Error).message }, 'worker stopped with an error'));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await running.done;
  watchdog.stop();
  probes.close();
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
