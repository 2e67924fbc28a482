// Composition root of the API process (production: `npm run start:api`).
import { shutdownTelemetry, startTelemetry } from '../infra/telemetry';
// Tracing (when OTEL_* asks for it) must start before express, pg and http load.
if (require.main === module) startTelemetry('agentry-api');
import type { Client } from '@temporalio/client';
import { Server, type RequestListener, type ServerOptions } from 'node:http';
import { loadConfig, requireProductionSettings } from '../infra/config';
import { watchEventLoop } from '../infra/event-loop-watchdog';
import { createLogger } from '../infra/logger';
import { checkNamespace, connectTemporal } from '../infra/temporal-connection';
import { VERSION } from '../infra/version';
import { connectTemporalClient, createRuntime, type Runtime } from '../runtime';
import { startWorker } from '../start-worker';
import { createApp } from './app';
import type { ResponsesWebSockets } from './responses-websocket';
import { createApiMetrics } from './metrics';

const SHUTDOWN_GRACE_MS = 10_000;
/**
 * Idle keep-alive connections (issue 24): clients are told 5 s (`Keep-Alive: timeout=5`, what Node
 * says by default), the server closes one after 65 s. A request written on a connection the server
 * has just closed gets no status at all (the client reads "other side closed"), so closing an idle
 * connection must be the client's doing: with Node's own timeout (5 s, 6 s in effect) clients
 * whose process had stalled for a few seconds sent requests on connections the API had closed
 * meanwhile (docs/decisions.md). 65 s also outlasts the 60 s idle timeout of common proxies.
 */
const KEEP_ALIVE_HINT_S = 5;
const IDLE_CONNECTION_MS = 65_000;

/** The API's HTTP server: closing it closes its WebSockets too, which it would otherwise wait for. */
class ApiServer extends Server {
  constructor(
    options: ServerOptions,
    listener: RequestListener,
    private readonly webSockets: ResponsesWebSockets,
  ) {
    super(options, listener);
  }

  override close(callback?: (err?: Error) => void): this {
    this.webSockets.close();
    return super.close(callback);
  }
}

interface ApiOptions {
  extraMetrics?: () => Promise<string>;
  /** `temporal` shares its NativeConnection with a worker of this process (runtime.ts). */
  eagerStart?: boolean;
}

export async function startApi(rt: Runtime, temporal: Client, options: ApiOptions = {}): Promise<Server> {
  const { config } = rt;
  const metrics = createApiMetrics();
  // The same event-loop watchdog as the worker's (issue 33 item 3): a metric and a warn line.
  const watchdog = watchEventLoop({ registry: metrics.registry, logger: rt.logger });
  const { app, upgrade, webSockets } = createApp({
    ...rt,
    version: VERSION,
    temporal,
    metrics,
    failureLimit: config.authFailureLimit,
    bodyLimitBytes: config.bodyLimitBytes,
    documentBodyLimitBytes: config.documentBodyLimitBytes,
    taskQueue: config.taskQueue,
    defaultLlmId: config.defaultLlmId,
    trustProxy: config.trustProxy,
    codecCorsOrigins: config.codecCorsOrigins,
    webSocket: {
      limitMs: config.webSocket.limitSeconds * 1000,
      pingMs: config.webSocket.pingSeconds * 1000,
    },
    readiness: {
      database: () => rt.db.raw('select 1'),
      ...(rt.redis ? { redis: () => rt.redis!.ping() } : {}),
      temporal: () => checkNamespace(temporal.workflowService, config.temporal),
    },
    // The runtime's series once per process: an embedded worker's registry does not hold them.
    extraMetrics: async () =>
      [await rt.metrics.metrics(), options.extraMetrics ? await options.extraMetrics() : ''].join('\n'),
    ...(options.eagerStart ? { eagerStart: true } : {}),
  });
  const server = new ApiServer(
    { keepAliveTimeout: IDLE_CONNECTION_MS },
    (req, res) => {
      if (res.shouldKeepAlive) res.setHeader('Keep-Alive', `timeout=${KEEP_ALIVE_HINT_S}`);
      app(req, res);
    },
    webSockets,
  );
  server.on('upgrade', upgrade);
  server.once('close', () => watchdog.stop());
  return new Promise((resolve, reject) => {
    server.listen(config.port, config.host, () => resolve(server));
    server.once('error', reject);
  });
}

async function main(): Promise<void> {
  const config = loadConfig();
  requireProductionSettings(config);
  const logger = createLogger(config.logLevel);
  const rt = await createRuntime(config, logger);
  // AGENTRY_API_RUNS_WORKER: a worker in this process on the client's connection, so that starts
  // are eager (docs/operations.md, "Eager workflow start").
  const connection = config.apiRunsWorker ? await connectTemporal(config.temporal) : undefined;
  const worker = connection ? await startWorker(rt, connection) : undefined;
  const temporal = await connectTemporalClient(rt, connection);
  const server = await startApi(rt, temporal, { eagerStart: worker !== undefined });
  const address = server.address();
  logger.info({ port: typeof address === 'object' && address ? address.port : config.port }, 'API listening');
  const stop = async (): Promise<void> => {
    // Stop accepting; let running requests and streams finish for a grace period.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
    });
    await worker?.stop().catch(() => undefined);
    await temporal.connection.close().catch(() => undefined);
    await rt.close().catch(() => undefined);
    await shutdownTelemetry().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
