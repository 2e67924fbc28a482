// OpenTelemetry traces (SPEC §16): HTTP (node:http + Express), PostgreSQL (pg) and Temporal
// (client, workflow and activity interceptors), exported with the standard OTEL_* variables and
// off when none names an exporter or an endpoint. Nothing is loaded when it is off.
//
// startTelemetry() must run before express, pg and node:http are first required (instrumentation
// patches modules as they load), so each entry point calls it from its first statements, ahead
// of its other imports. One trace covers: the HTTP request → StartWorkflow (client interceptor,
// context in the workflow's start header) → RunWorkflow and StartActivity (workflow interceptor in
// the bundle, spans exported through a sink) → RunActivity (activity interceptor) → pg queries.
// Span attributes carry ids, routes, SQL statement text (parameterised: values are never bound in)
// and the request id, never request or answer content.
import type { SpanProcessor, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type * as SdkNode from '@opentelemetry/sdk-node';
import type * as SdkNodeUtils from '@opentelemetry/sdk-node/build/src/utils';
import type * as HttpInstrumentationModule from '@opentelemetry/instrumentation-http';
import type * as ExpressInstrumentationModule from '@opentelemetry/instrumentation-express';
import type * as PgInstrumentationModule from '@opentelemetry/instrumentation-pg';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';
import { trace } from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';

type Env = Record<string, string | undefined>;

/** Endpoints whose spans are noise (probes and scrapes). */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * On when an exporter or an OTLP endpoint is configured and the SDK is not disabled:
 * OTEL_TRACES_EXPORTER (other than `none`), OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
 */
export function telemetryEnabled(env: Env = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (exporters.length > 0) return exporters[0] !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

interface State {
  sdk: SdkNode.NodeSDK;
  processors: SpanProcessor[];
  resource: SdkNode.resources.Resource;
}

let state: State | undefined;

/* eslint-disable @typescript-eslint/no-require-imports -- loaded only when telemetry is on */

/** Starts tracing when configured (idempotent); `serviceName` unless OTEL_SERVICE_NAME. */
export function startTelemetry(serviceName: string, env: Env = process.env): boolean {
  if (state) return true;
  if (!telemetryEnabled(env)) return false;
  const { NodeSDK, resources } = require('@opentelemetry/sdk-node') as typeof SdkNode;
  // The processors the SDK would build from OTEL_TRACES_EXPORTER / OTEL_EXPORTER_OTLP_*; built
  // here so that workflow spans (which reach the worker through a sink) go through them too.
  const { getSpanProcessorsFromEnv } =
    require('@opentelemetry/sdk-node/build/src/utils') as typeof SdkNodeUtils;
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof HttpInstrumentationModule;
  const { ExpressInstrumentation, ExpressLayerType } =
    require('@opentelemetry/instrumentation-express') as typeof ExpressInstrumentationModule;
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof PgInstrumentationModule;

  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) win over the default name.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': serviceName }))
    .merge(
      resources.detectResources({
        detectors: [resources.envDetector, resources.processDetector, resources.hostDetector],
      }),
    );
  const processors = getSpanProcessorsFromEnv(undefined);
  const sdk = new NodeSDK({
    resource,
    autoDetectResources: false,
    spanProcessors: processors,
    // Traces only: metrics are Prometheus (/metrics), logs are pino on stdout.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        // The codec server's capability URLs carry a secret in the path (DX-6): never in a span.
        ignoreIncomingRequestHook: (req: IncomingMessage) => {
          const path = (req.url ?? '').split('?')[0] ?? '';
          return UNTRACED_PATHS.has(path) || path.startsWith('/temporal-codec/');
        },
        // Outgoing calls without a parent (Temporal gRPC polls use http2, but fetches from
        // background timers would be orphans) are not traced.
        requireParentforOutgoingSpans: true,
      }),
      // Request-handler spans (with http.route); a span per middleware and per mounted router
      // would be noise.
      new ExpressInstrumentation({
        ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER],
      }),
      // Statements are parameterised; enhancedDatabaseReporting (bound values) stays off.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
    ],
  });
  sdk.start();
  state = { sdk, processors, resource };
  return true;
}

/**
 * Names the request id (x-request-id, SPEC §1) on the active span: called by the request-id
 * middleware, which runs in the HTTP server span's context (middleware layers get no span).
 */
export function annotateRequest(requestId: string): void {
  trace.getActiveSpan()?.setAttribute('agentry.request_id', requestId);
}

/** Flushes and stops the exporters (call on shutdown; no-op when off). */
export async function shutdownTelemetry(): Promise<void> {
  const current = state;
  state = undefined;
  await current?.sdk.shutdown();
}

/** Temporal client interceptors: the start of a workflow joins the caller's trace. */
export function temporalClientInterceptors(): { workflow: WorkflowClientInterceptor[] } | undefined {
  if (!state) return undefined;
  const { OpenTelemetryWorkflowClientInterceptor } =
    require('@temporalio/interceptors-opentelemetry') as typeof TemporalOtel;
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

/** Activity interceptors of a worker: RunActivity spans, children of the workflow's span. */
export function temporalActivityInterceptors(): ActivityInterceptorsFactory[] {
  if (!state) return [];
  const { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } =
    require('@temporalio/interceptors-opentelemetry') as typeof TemporalOtel;
  return [
    (ctx) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
      outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
    }),
  ];
}

/**
 * The sink through which the workflow interceptor (infra/telemetry-workflow.ts, in the bundle)
 * exports its spans. Always registered, so a workflow started by a traced API on a worker with
 * telemetry off does not log "unregistered external sink": its spans are dropped then.
 */
export function temporalWorkflowSinks(): InjectedSinks<{ exporter: { export(spans: unknown[]): void } }> {
  const current = state;
  if (!current) return { exporter: { export: { fn: () => undefined } } };
  const { makeWorkflowExporter } = require('@temporalio/interceptors-opentelemetry') as typeof TemporalOtel;
  // The interceptor package builds spans in the shape of OpenTelemetry SDK 1.x (parentSpanId,
  // instrumentationLibrary); the 2.x exporters read parentSpanContext and instrumentationScope.
  const bridge = {
    onStart: () => undefined,
    onEnd: (span: ReadableSpan) => {
      const legacy = span as ReadableSpan & { parentSpanId?: string; instrumentationLibrary?: unknown };
      const context = span.spanContext();
      const adapted = Object.assign(Object.create(null) as object, span, {
        spanContext: () => context,
        attributes: primitiveAttributes(span.attributes),
        resource: current.resource,
        parentSpanContext:
          span.parentSpanContext ??
          (legacy.parentSpanId
            ? { traceId: context.traceId, spanId: legacy.parentSpanId, traceFlags: context.traceFlags }
            : undefined),
        instrumentationScope: span.instrumentationScope ?? legacy.instrumentationLibrary,
      }) as ReadableSpan;
      for (const processor of current.processors) processor.onEnd(adapted);
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const sink = makeWorkflowExporter(
    bridge as unknown as Parameters<typeof makeWorkflowExporter>[0],
    current.resource as unknown as Parameters<typeof makeWorkflowExporter>[1],
  );
  return { exporter: sink } as unknown as InjectedSinks<{ exporter: { export(spans: unknown[]): void } }>;
}

/**
 * The sink copies the whole WorkflowInfo into each workflow span's attributes: keep the scalar
 * ones (ids, type, task queue, attempt...), drop objects (search attributes map, `unsafe`).
 */
function primitiveAttributes(attributes: ReadableSpan['attributes']): ReadableSpan['attributes'] {
  const kept: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      kept[key] = value;
  }
  return kept;
}

/** Module of the workflow interceptors, for bundles and workers built from source. */
export const WORKFLOW_INTERCEPTORS_MODULE = require.resolve('./telemetry-workflow');
