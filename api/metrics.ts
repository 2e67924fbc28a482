// Prometheus metrics of the API (SPEC §16). Labels carry route templates and statuses only,
// never ids or text.
import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface ApiMetrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  executionsStarted: Counter<'kind'>;
  relayLag: Histogram;
  /** Open WebSockets of /v1/responses (SPEC OR-5). */
  webSockets: Gauge;
}

export function createApiMetrics(registry = new Registry(), collectDefaults = true): ApiMetrics {
  if (collectDefaults) collectDefaultMetrics({ register: registry, prefix: 'agentry_api_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'agentry_http_requests_total',
      help: 'HTTP requests by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'agentry_http_request_duration_seconds',
      help: 'HTTP request latency (until the response ends, streams included)',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    executionsStarted: new Counter({
      name: 'agentry_executions_started_total',
      help: 'Executions started, by kind',
      labelNames: ['kind'],
      registers: [registry],
    }),
    relayLag: new Histogram({
      name: 'agentry_relay_lag_seconds',
      help: 'Delay between an event entering the relay and the API reading it',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
      registers: [registry],
    }),
    webSockets: new Gauge({
      name: 'agentry_websocket_connections',
      help: 'Open WebSocket connections of /v1/responses',
      registers: [registry],
    }),
  };
}

export function httpMetrics(metrics: ApiMetrics): RequestHandler {
  return (req, res, next) => {
    const end = metrics.httpDuration.startTimer();
    res.on('close', () => {
      const route = req.route?.path ? `${req.baseUrl}${req.route.path as string}` : 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      end(labels);
    });
    next();
  };
}
