// createApp(deps): the HTTP edge, wired from what a composition root hands in. Order: request
// id and metrics, unauthenticated endpoints, the codec server, authentication, resources, the
// single error handler.
import type { Client } from '@temporalio/client';
import express, { type Express } from 'express';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Stores } from '../db/stores';
import type { ChainRateLimiter } from '../infra/chain-rate-limiter';
import type { ExecuteCache } from '../infra/execute-cache';
import type { KeyRing } from '../infra/crypto';
import type { EncryptionCodec } from '../infra/payload-codec';
import type { Config } from '../infra/config';
import type { Limits } from '../domain/limits';
import type { LeasedIdempotencyStore } from '../infra/idempotency-store';
import type { Relay } from '../infra/relay';
import type { StopNotices } from '../infra/stop-notices';
import type { TraceStore } from '../infra/trace-store';
import type { ExecutionProfiles, IngestionProfile } from '../workflows/contracts';
import './request-context';
import { authenticate } from './auth';
import { errorHandler, notFoundHandler } from './error-handler';
import { httpMetrics, type ApiMetrics } from './metrics';
import { requestContext } from './request-id';
import { ResponsesWebSockets } from './responses-websocket';
import type { SocketSettings } from './responses-socket';
import { RouteRegistry } from './route-registry';
import { apiKeyRoutes } from './routes/api-keys';
import { codecRoutes } from './routes/codec';
import { agentExecutionRoutes } from './routes/agent-execution';
import { executionRoutes } from './routes/executions';
import { responseRoutes } from './routes/responses';
import { agentRoutes } from './routes/agents';
import { documentRoutes } from './routes/documents';
import { searchRoutes } from './routes/search';
import { embeddingModelRoutes } from './routes/embedding-models';
import { llmRoutes } from './routes/llms';
import { pipelineRoutes } from './routes/pipelines';
import { promptRoutes } from './routes/prompts';
import { routingPolicyRoutes } from './routes/routing-policies';
import { cacheStatsRoutes } from './routes/cache-stats';
import { gatewayRoutes } from './routes/gateway';
import { chainRoutes } from './routes/chains';
import { textSplitterRoutes } from './routes/text-splitters';
import { systemRoutes } from './routes/system';

interface AppDeps extends Stores {
  version: string;
  logger: Logger;
  keyring: KeyRing;
  codec: EncryptionCodec;
  relay: Relay;
  /** DX-3: a cancel stops the execution's model stream through the workers' stop notices. */
  stopNotices: StopNotices;
  traces: TraceStore;
  temporal: Client;
  executeCache: ExecuteCache;
  defaultLlmId: string | undefined;
  /** Which peers may set X-Forwarded-For (AGENTRY_TRUST_PROXY). */
  trustProxy?: string | number;
  ingestion: IngestionProfile;
  documentBodyLimitBytes: number;
  metrics: ApiMetrics;
  failureLimiter: RateLimiterAbstract;
  /** Idempotency-Key claims of the execute routes (DX-4), shared by the replicas through Redis. */
  idempotency: LeasedIdempotencyStore;
  /** CH-4 `rateLimitPerMinute`, shared by the replicas through Redis. */
  chainRateLimiter: ChainRateLimiter;
  failureLimit: number;
  bodyLimitBytes: number;
  taskQueue: string;
  profiles: ExecutionProfiles;
  /** Workflow starts are eager: the Temporal client shares its connection with a worker here. */
  eagerStart?: boolean;
  codecCorsOrigins: string[];
  readiness: Record<string, () => Promise<unknown>>;
  extraMetrics?: () => Promise<string>;
  config: Pick<Config, 'contentRetentionSeconds'>;
  /** SPEC §18 limits: the routes check them and their schemas document them. */
  limits: Limits;
  /** The WebSocket mode of /v1/responses: a connection's lifetime and its ping interval. */
  webSocket: SocketSettings;
}

export interface ApiApp {
  app: Express;
  routes: RouteRegistry;
  /** The HTTP server's `upgrade` listener (the WebSocket mode of /v1/responses). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  webSockets: ResponsesWebSockets;
}

export function createApp(deps: AppDeps): ApiApp {
  const app = express();
  const routes = new RouteRegistry();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.trustProxy ?? 'loopback');
  app.set('query parser', 'simple');

  app.use(requestContext(deps.logger));
  app.use(httpMetrics(deps.metrics));
  app.use(systemRoutes(routes, deps));
  app.use(codecRoutes(deps));
  app.use(authenticate(deps));
  const webSockets = new ResponsesWebSockets(deps);
  app.use(webSockets.router);
  // Documents carry up to 10 MB of content: their own body limit (SPEC §5, §18); so do responses'
  // inputs, whose images and files travel as data URLs (docs/decisions.md, "Body limit of /v1").
  app.use(
    ['/pipelines/:id/documents', '/pipelines/:id/documents\\:batch', '/v1/responses'],
    express.json({ limit: deps.documentBodyLimitBytes, strict: true }),
  );
  app.use(express.json({ limit: deps.bodyLimitBytes, strict: true }));
  app.use(apiKeyRoutes(routes, deps));
  app.use(llmRoutes(routes, deps));
  app.use(embeddingModelRoutes(routes, deps));
  app.use(textSplitterRoutes(routes, deps));
  app.use(pipelineRoutes(routes, deps));
  app.use(documentRoutes(routes, deps));
  app.use(searchRoutes(routes, deps));
  app.use(agentRoutes(routes, deps));
  app.use(agentExecutionRoutes(routes, deps));
  app.use(executionRoutes(routes, deps));
  app.use(responseRoutes(routes, deps));
  app.use(promptRoutes(routes, deps));
  app.use(routingPolicyRoutes(routes, deps));
  app.use(cacheStatsRoutes(routes, deps));
  app.use(gatewayRoutes(routes, deps));
  app.use(chainRoutes(routes, deps));
  app.use(notFoundHandler);
  app.use(errorHandler);
  return {
    app,
    routes,
    upgrade: (req, socket, head) => webSockets.upgrade(app, req, socket, head),
    webSockets,
  };
}
