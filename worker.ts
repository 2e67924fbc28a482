// Composition root of the worker process (production: `npm run start:worker`): configuration,
// the runtime, the metrics port, and a worker (start-worker.ts) until a signal stops it.
import { startTelemetry, shutdownTelemetry } from './infra/telemetry';
// Tracing (when OTEL_* asks for it) must start before express, pg and http load.
if (require.main === module) startTelemetry('agentry-worker');
import { createServer, type Server } from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { loadConfig, requireProductionSettings } from './infra/config';
import { createLogger, temporalLogger } from './infra/logger';
import { connectTemporal } from './infra/temporal-connection';
import { installTemporalMetrics } from './infra/temporal-metrics';
import { createRuntime } from './runtime';
import { startWorker } from './start-worker';

async function main(): Promise<void> {
  const config = loadConfig();
  requireProductionSettings(config);
  const logger = createLogger(config.logLevel);
  const temporalMetrics = await installTemporalMetrics({ logger: temporalLogger(logger) });
  const rt = await createRuntime(config, logger);
  const connection = await connectTemporal(config.temporal);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'agentry_worker_' });
  const metricsServer: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    Promise.all([registry.metrics(), rt.metrics.metrics(), temporalMetrics()]).then(
      (series) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(series.join('\n')),
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
