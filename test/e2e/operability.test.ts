// SPEC §16 on real API and worker processes (built dist/): the Prometheus series of both
// processes after an agent execution, the ids in the structured logs, and OpenTelemetry traces
// (exported as OTLP/HTTP JSON to a receiver in this test) that join the HTTP request, the
// workflow and its activities in one trace, with no prompt or answer text in any attribute.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KeyRing } from '../../infra/crypto';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import type { Api } from '../helpers/http';
import { parseNdjson } from '../helpers/http';
import { documentsReady } from '../helpers/knowledge';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { until, waitFor } from '../helpers/wait';

const QUESTION = 'How do I rotate the zeppelin-credentials quarterly?';
const FRAGMENT =
  'To rotate the zeppelin-credentials, open the vault console, create a new secret version and ' +
  'restart the services that read it. Rotation is quarterly.';
const ANSWER = 'Open the vault console and create a new secret version, then restart.';
const SYSTEM = 'Answer using only the reference text about obscure-walrus matters.';

interface Target {
  agentId: string;
  pipelineId: string;
  llmId: string;
}

/** An agent with a query and a similarity placeholder, a one-document pipeline and an LLM. */
async function setupAgent(admin: Api, fake: FakeModelServer, model: string): Promise<Target> {
  const embedding = await admin.post('/embedding_models', { name: 'hash', provider: 'hash', size: 64 });
  expect(embedding.status).toBe(201);
  const splitter = await admin.post('/text_splitters', {
    name: 'paragraphs',
    provider: 'character',
    parameters: { separator: '\n\n', chunk_size: 1000, chunk_overlap: 0 },
  });
  expect(splitter.status).toBe(201);
  const pipeline = await admin.post('/pipelines', {
    name: 'ops-kb',
    embedding_model_id: embedding.body.id,
    text_splitter_id: splitter.body.id,
    classifications: [{ name: 'internal' }],
  });
  expect(pipeline.status).toBe(201);
  const doc = await admin.post(`/pipelines/${pipeline.body.id}/documents`, {
    content: FRAGMENT,
    classification: 'internal',
  });
  expect(doc.status).toBe(202);
  await documentsReady(admin, pipeline.body.id, [doc.body.id]);
  const llm = await admin.post('/llms', { name: 'fake', endpoint: fake.url, model, api_key: 'sk-ops' });
  expect(llm.status).toBe(201);
  const agent = await admin.post('/agents', {
    name: 'ops-agent',
    prompt: [
      { role: 'system', template: SYSTEM },
      { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}' },
    ],
    placeholders: [
      { name: 'question', type: 'query' },
      { name: 'context', type: 'similarity', target: 'question', params: { k: 3 } },
    ],
  });
  expect(agent.status).toBe(201);
  return { agentId: agent.body.id, pipelineId: pipeline.body.id, llmId: llm.body.id };
}

async function execute(admin: Api, t: Target, headers: Record<string, string> = {}) {
  const res = await admin.post(
    `/agents/${t.agentId}/execute`,
    { prompt: { question: QUESTION }, classification: 'internal' },
    { 'x-pipeline-id': t.pipelineId, 'x-llm-id': t.llmId, ...headers },
  );
  expect(res.status).toBe(200);
  const events = parseNdjson(res.text);
  expect(events[events.length - 1].type).toBe('done');
  return { executionId: res.headers.get('x-agentry-execution-id')!, events };
}

/** `name{labels} value` → value, for the one series whose labels include all of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const body = /\{([^}]*)\}/.exec(line)?.[1] ?? '';
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`)))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('§16 metrics and logs of the API and worker processes', () => {
  let stack: ProcessStack;
  let fake: FakeModelServer;
  let target: Target;
  let executionId: string;
  let apiMetrics: string;
  let workerMetrics: string;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    stack = await startProcessStack({ AGENTRY_LOG_LEVEL: 'info' });
    target = await setupAgent(stack.admin, fake, 'ops-model');
    fake.script('ops-model', {
      text: ANSWER,
      usage: { input_tokens: 37, output_tokens: 11 },
      // The first attempt fails with a 500: Temporal retries, the worker logs the failure.
      failFirst: { count: 1, status: 500 },
    });
    ({ executionId } = await execute(stack.admin, target, { 'x-request-id': 'ops-metrics-request-1' }));
    apiMetrics = await (await fetch(`http://127.0.0.1:${stack.api.port}/metrics`)).text();
    workerMetrics = await (await fetch(`http://127.0.0.1:${stack.worker.metricsPort}/metrics`)).text();
  });

  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  it('§16: the API has requests and latency by route template and status, executions started and relay lag', () => {
    const route = { method: 'POST', route: '/agents/:id/execute', status: '200' };
    expect(sample(apiMetrics, 'agentry_http_requests_total', route)).toBe(1);
    expect(sample(apiMetrics, 'agentry_http_request_duration_seconds_count', route)).toBe(1);
    expect(sample(apiMetrics, 'agentry_http_request_duration_seconds_sum', route)).toBeGreaterThan(0);
    expect(sample(apiMetrics, 'agentry_http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(
      1,
    );
    expect(sample(apiMetrics, 'agentry_executions_started_total', { kind: 'agent' })).toBe(1);
    // One relay entry per event: start, deltas, done (and the failed attempt's none before start).
    expect(sample(apiMetrics, 'agentry_relay_lag_seconds_count')).toBeGreaterThanOrEqual(3);
    const lagSum = sample(apiMetrics, 'agentry_relay_lag_seconds_sum')!;
    expect(lagSum).toBeGreaterThanOrEqual(0);
    expect(lagSum).toBeLessThan(30);
    expect(sample(apiMetrics, 'agentry_api_process_resident_memory_bytes')).toBeGreaterThan(10e6);
  });

  it('§16: the worker has activity durations by type and outcome, failures by type, model calls, tokens and retrieval', () => {
    const success = (activity: string) =>
      sample(workerMetrics, 'agentry_activity_duration_seconds_count', { activity, outcome: 'success' });
    expect(success('callModel')).toBe(1);
    expect(success('retrieveFragments')).toBe(1);
    expect(success('renderPrompt')).toBeGreaterThanOrEqual(1);
    expect(
      sample(workerMetrics, 'agentry_activity_duration_seconds_count', {
        activity: 'callModel',
        outcome: 'failure',
      }),
    ).toBe(1);
    expect(
      sample(workerMetrics, 'agentry_activity_failures_total', {
        activity: 'callModel',
        type: 'Llm.ServerError',
      }),
    ).toBe(1);
    expect(sample(workerMetrics, 'agentry_model_call_duration_seconds_count', { outcome: 'success' })).toBe(
      1,
    );
    expect(sample(workerMetrics, 'agentry_model_call_duration_seconds_count', { outcome: 'failure' })).toBe(
      1,
    );
    const modelSeconds = sample(workerMetrics, 'agentry_model_call_duration_seconds_sum', {
      outcome: 'success',
    })!;
    expect(modelSeconds).toBeGreaterThan(0);
    expect(modelSeconds).toBeLessThan(30);
    expect(sample(workerMetrics, 'agentry_model_tokens_total', { direction: 'input' })).toBe(37);
    expect(sample(workerMetrics, 'agentry_model_tokens_total', { direction: 'output' })).toBe(11);
    expect(sample(workerMetrics, 'agentry_retrieval_duration_seconds_count', { outcome: 'success' })).toBe(1);
    expect(sample(workerMetrics, 'agentry_worker_process_resident_memory_bytes')).toBeGreaterThan(10e6);
    // Temporal's own worker metrics (Rust core), appended to the same scrape.
    expect(workerMetrics).toMatch(/^temporal_activity_execution_latency\w*\{/m);
    expect(workerMetrics).toMatch(/^temporal_workflow_task_execution_latency\w*\{/m);
  });

  it('§16: labels carry no ids or text', () => {
    for (const text of [apiMetrics, workerMetrics]) {
      for (const secret of [
        executionId,
        target.agentId,
        target.pipelineId,
        target.llmId,
        stack.env.adminKeyId,
      ])
        expect(text).not.toContain(secret);
      expect(text).not.toContain('zeppelin');
      expect(text).not.toContain('ops-metrics-request-1');
      // No label value looks like a UUID.
      expect(text).not.toMatch(/="[^"]*[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
    }
  });

  it('§16: log lines are JSON and carry the request id, execution id and workflow id; the retried model failure names its execution', async () => {
    const lines = (output: string[]) =>
      output
        .join('')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const request = lines(stack.api.output).find(
      (l) => l.msg === 'request' && l.requestId === 'ops-metrics-request-1',
    );
    expect(request).toMatchObject({
      route: '/agents/:id/execute',
      status: 200,
      executionId,
      workflowId: `execution-${executionId}`,
    });
    const failed = await until(() => lines(stack.worker.output).find((l) => l.msg === 'Activity failed'), {
      what: "the worker's 'Activity failed' line",
    });
    expect(failed).toMatchObject({
      level: 40,
      component: 'temporal',
      activityType: 'callModel',
      workflowId: `execution-${executionId}`,
      executionId,
      failureType: 'Llm.ServerError',
    });
    const all = stack.api.output.join('') + stack.worker.output.join('');
    for (const text of [QUESTION, 'zeppelin', ANSWER, SYSTEM, 'obscure-walrus'])
      expect(all).not.toContain(text);
  });
});

// ---- OpenTelemetry ----------------------------------------------------------------------------

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  service: string;
}

/** A minimal OTLP/HTTP receiver (JSON encoding, POST /v1/traces) keeping every span. */
async function startOtlpReceiver(): Promise<{
  url: string;
  spans: OtlpSpan[];
  raw: string[];
  close(): Promise<void>;
}> {
  const spans: OtlpSpan[] = [];
  const raw: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      raw.push(body);
      const parsed = JSON.parse(body) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: { stringValue?: string } }[] };
          scopeSpans: { spans: Omit<OtlpSpan, 'service'>[] }[];
        }[];
      };
      for (const rs of parsed.resourceSpans) {
        const service =
          rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? 'unknown';
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    raw,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const isPostgres = (span: OtlpSpan) =>
  (attribute(span, 'db.system') ?? attribute(span, 'db.system.name')) === 'postgresql';

function attribute(span: OtlpSpan, key: string): unknown {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
}

describe('§16 OpenTelemetry traces (OTEL_* set)', () => {
  let stack: ProcessStack;
  let fake: FakeModelServer;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    receiver = await startOtlpReceiver();
    stack = await startProcessStack({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
    await fake?.close();
  });

  it('§16: the HTTP request, StartWorkflow, RunWorkflow, the activities and their queries share one trace; x-request-id is an attribute; no prompt text anywhere', async () => {
    const target = await setupAgent(stack.admin, fake, 'otel-model');
    fake.script('otel-model', { text: ANSWER });
    const { executionId } = await execute(stack.admin, target, { 'x-request-id': 'ops-trace-request-7' });

    const find = (pred: (s: OtlpSpan) => boolean) => receiver.spans.find(pred);
    const requestSpan = (requestId: string) => find((s) => attribute(s, 'agentry.request_id') === requestId);
    // The workflow's span is exported when the run completes, after the answer was streamed.
    const { http, runActivity, runWorkflow } = await until(
      () => {
        const http = requestSpan('ops-trace-request-7');
        const runActivity =
          http && find((s) => s.traceId === http.traceId && s.name === 'RunActivity:callModel');
        const runWorkflow =
          http && find((s) => s.traceId === http.traceId && s.name === 'RunWorkflow:agentExecution');
        return runActivity && runWorkflow ? { http, runActivity, runWorkflow } : undefined;
      },
      { what: 'the spans of the request, its workflow and its model call', intervalMs: 100 },
    );
    expect(http.service).toBe('agentry-api');
    expect(http.parentSpanId ?? '').toBe('');
    const trace = receiver.spans.filter((s) => s.traceId === http.traceId);
    const named = (name: string) => trace.find((s) => s.name === name);
    const startWorkflow = named('StartWorkflow:agentExecution');
    const startActivity = named('StartActivity:callModel');
    expect(startWorkflow?.service).toBe('agentry-api');
    expect(runWorkflow?.service).toBe('agentry-worker');
    expect(runActivity?.service).toBe('agentry-worker');
    // Parent links across the processes: HTTP → StartWorkflow → RunWorkflow → StartActivity → RunActivity.
    expect(runWorkflow.parentSpanId).toBe(startWorkflow!.spanId);
    expect(startActivity!.parentSpanId).toBeTruthy();
    expect(runActivity.parentSpanId).toBe(startActivity!.spanId);
    expect(attribute(runWorkflow, 'workflowId')).toBe(`execution-${executionId}`);
    expect(named('RunActivity:retrieveFragments')).toBeDefined();
    // Express route span and PostgreSQL queries, from both processes, in the same trace.
    expect(
      trace.some((s) => s.service === 'agentry-api' && attribute(s, 'http.route') === '/agents/:id/execute'),
    ).toBe(true);
    expect(trace.some((s) => s.service === 'agentry-api' && isPostgres(s))).toBe(true);
    const workerQuery = trace.find((s) => s.service === 'agentry-worker' && isPostgres(s));
    expect(workerQuery).toBeDefined();

    // Probes and scrapes are not traced: once a request sent after the probe has its span
    // exported (spans are batched in the order they end), a span of the probe would be too.
    await fetch(`http://127.0.0.1:${stack.api.port}/readyz`);
    expect((await stack.admin.get('/llms', { 'x-request-id': 'ops-after-readyz' })).status).toBe(200);
    await waitFor(() => requestSpan('ops-after-readyz') !== undefined, {
      what: 'the span of the request after the probe',
    });
    expect(
      receiver.spans.some((s) => attribute(s, 'http.route') === '/readyz' || s.name.includes('/readyz')),
    ).toBe(false);

    // The codec's capability URL carries a secret in its path (DX-6): its requests are not traced.
    const capability = new KeyRing(stack.env.config.applicationSecret!).codecCapability();
    for (const cap of [capability, capability.slice(1)]) {
      const res = await fetch(`http://127.0.0.1:${stack.api.port}/temporal-codec/${cap}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payloads: [] }),
      });
      expect(res.status).toBe(cap === capability ? 200 : 401);
    }
    expect((await stack.admin.get('/llms', { 'x-request-id': 'ops-after-codec' })).status).toBe(200);
    await waitFor(() => requestSpan('ops-after-codec') !== undefined, {
      what: 'the span of the request after the codec calls',
    });
    expect(receiver.raw.join('\n')).not.toContain(capability.slice(1));
    expect(receiver.spans.some((s) => JSON.stringify(s).includes('temporal-codec'))).toBe(false);

    const exported = receiver.raw.join('\n');
    for (const text of [
      QUESTION,
      'zeppelin',
      ANSWER,
      SYSTEM,
      'obscure-walrus',
      'sk-ops',
      stack.env.adminKeySecret,
    ])
      expect(exported).not.toContain(text);
  });
});
