// Unauthenticated operational endpoints (SPEC §1, §16): root, liveness, readiness, metrics,
// the OpenAPI document and its interactive reference.
import { Router } from 'express';
import { connectionProblem, type ConnectionProblem } from '../../infra/connection-errors';
import swaggerUi from 'swagger-ui-express';
import type { ApiMetrics } from '../metrics';
import { buildOpenApi } from '../openapi';
import type { RouteRegistry } from '../route-registry';

interface SystemRouteDeps {
  version: string;
  metrics: ApiMetrics;
  /**
   * Name → check; a check that throws or returns false makes /readyz 503. An error with a
   * `reason` (TemporalConnectionError) is shown as it is; others by their kind only, since the
   * endpoint is unauthenticated and an error's text can name hosts.
   */
  readiness: Record<string, () => Promise<unknown>>;
  /** Extra registries served on /metrics (the embedded quick start adds the worker's). */
  extraMetrics?: () => Promise<string>;
}

const READINESS_TIMEOUT_MS = 2000;

const TIMED_OUT = 'no answer within 2 s';

/** undefined when the dependency answered, else what is wrong. */
async function check(fn: () => Promise<unknown>): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(TIMED_OUT)), READINESS_TIMEOUT_MS);
    });
    return (await Promise.race([fn(), timeout])) === false ? 'not ready' : undefined;
  } catch (err) {
    return problemOf(err);
  } finally {
    clearTimeout(timer);
  }
}

const SAID: Record<ConnectionProblem, string> = {
  certificate: 'TLS: the server certificate was not accepted',
  credentials: 'the credentials were refused',
  unreachable: 'unreachable',
};

function problemOf(err: unknown): string {
  const { reason, message } = err as { reason?: unknown; message?: unknown };
  if (typeof reason === 'string') return reason;
  if (message === TIMED_OUT) return TIMED_OUT;
  const kind = connectionProblem(err);
  if (kind) return SAID[kind];
  if (typeof message === 'string' && /closed|offline|not connected/i.test(message)) return 'unreachable';
  return 'unavailable';
}

export function systemRoutes(routes: RouteRegistry, deps: SystemRouteDeps): Router {
  const router = Router();
  const open = { auth: false, tag: 'System' } as const;

  routes.add(
    router,
    {
      ...open,
      method: 'get',
      path: '/',
      summary: 'Server name and version',
      success: { status: 200, description: 'Name and version' },
    },
    (_req, res) => {
      res.json({ message: 'Agentry server', version: deps.version });
    },
  );

  routes.add(
    router,
    {
      ...open,
      method: 'get',
      path: '/healthz',
      summary: 'Liveness: the process is up',
      success: { status: 200, description: 'Up' },
    },
    (_req, res) => {
      res.json({ status: 'ok' });
    },
  );

  routes.add(
    router,
    {
      ...open,
      method: 'get',
      path: '/readyz',
      summary: 'Readiness: database, Redis and Temporal reachable',
      success: { status: 200, description: 'Every dependency answered' },
      errors: [503],
    },
    async (_req, res) => {
      const names = Object.keys(deps.readiness);
      const results = await Promise.all(names.map((n) => check(deps.readiness[n]!)));
      const checks = Object.fromEntries(
        names.map((n, i) => [n, results[i] === undefined ? 'ok' : 'unavailable']),
      );
      const problems = Object.fromEntries(
        names.flatMap((n, i) => (results[i] === undefined ? [] : [[n, results[i]]])),
      );
      const ready = results.every((r) => r === undefined);
      if (!ready) res.set('Retry-After', '5');
      res
        .status(ready ? 200 : 503)
        .json({ status: ready ? 'ready' : 'unavailable', checks, ...(ready ? {} : { problems }) });
    },
  );

  routes.add(
    router,
    {
      ...open,
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics',
      success: { status: 200, description: 'Prometheus text format', contentTypes: ['text/plain'] },
    },
    async (_req, res) => {
      const own = await deps.metrics.registry.metrics();
      const extra = deps.extraMetrics ? await deps.extraMetrics() : '';
      res.type(deps.metrics.registry.contentType).send(extra ? `${own}\n${extra}` : own);
    },
  );

  let document: Record<string, unknown> | undefined;
  const openapi = (): Record<string, unknown> => (document ??= buildOpenApi(routes.specs, deps.version));
  routes.add(
    router,
    {
      ...open,
      method: 'get',
      path: '/openapi.json',
      summary: 'This document',
      success: { status: 200, description: 'OpenAPI 3.1' },
    },
    (_req, res) => {
      res.json(openapi());
    },
  );
  router.use(
    '/docs',
    swaggerUi.serveFiles(undefined, { swaggerUrl: '/openapi.json' }),
    swaggerUi.setup(undefined, { swaggerUrl: '/openapi.json' }),
  );
  return router;
}
