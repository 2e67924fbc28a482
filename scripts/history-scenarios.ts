// The scenarios scripts/record-histories.ts records, one per workflow shape that
// test/integration/replay.test.ts replays: each runs through the API of one stack.
import {
  type FakeBehaviour,
  type FakeEmbeddingBehaviour,
  type FakeModelServer,
} from '../test/fakes/fake-model-server';
import { retentionScheduleId } from '../infra/retention-schedule';
import { documentsReady } from '../test/helpers/knowledge';
import type { Stack } from '../test/helpers/stack';
import { waitFor } from '../test/helpers/wait';

export interface Context {
  stack: Stack;
  fake: FakeModelServer;
  ids: Record<
    | 'llm'
    | 'execLlm'
    | 'pipeline'
    | 'embeddingModel'
    | 'agent'
    | 'referenceAgent'
    | 'chain'
    | 'flakyEmbedder',
    string
  >;
}

export interface Scenario {
  name: string;
  /** How many workflows the scenario starts (children included). */
  workflows: number;
  /** The scenario records runs of the retention schedule (every other scenario leaves them out). */
  retention?: true;
  run(ctx: Context): Promise<void>;
}

const QUESTION = { prompt: { question: 'Which colour?' }, classification: 'public' };
const agentHeaders = (ctx: Context) => ({ 'x-pipeline-id': ctx.ids.pipeline, 'x-llm-id': ctx.ids.llm });
const QUERY = { messages: [{ role: 'user', content: 'Say hi' }] };

async function expectStatus(res: Promise<{ status: number; text: string }>, status: number): Promise<void> {
  const { status: got, text } = await res;
  if (got !== status) throw new Error(`expected HTTP ${status}, got ${got}: ${text}`);
}

/** A scenario that scripts the fake model and makes one request answered 200. */
function request(
  name: string,
  workflows: number,
  scripts: Record<string, FakeBehaviour>,
  call: (ctx: Context) => [path: string, body: unknown, headers?: Record<string, string>],
): Scenario {
  return {
    name,
    workflows,
    run(ctx) {
      for (const [model, behaviour] of Object.entries(scripts)) ctx.fake.script(model, behaviour);
      return expectStatus(ctx.stack.api.post(...call(ctx)), 200);
    },
  };
}

function ingestion(
  name: string,
  pipeline: 'pipeline' | 'flakyEmbedder',
  content: string,
  embeddings: FakeEmbeddingBehaviour = {},
): Scenario {
  return {
    name,
    workflows: 1,
    async run(ctx) {
      ctx.fake.scriptEmbeddings('emb', embeddings);
      const pipelineId = ctx.ids[pipeline];
      const doc = await ctx.stack.api.post(`/pipelines/${pipelineId}/documents`, {
        content,
        classification: 'public',
      });
      await documentsReady(ctx.stack.api, pipelineId, [doc.body.id]);
    },
  };
}

/** A documents:batch request of two documents through the embedding server: one batch workflow. */
const batchIngestion: Scenario = {
  name: 'ingestion-batch',
  workflows: 1,
  async run(ctx) {
    ctx.fake.scriptEmbeddings('emb', {});
    const pipelineId = ctx.ids.flakyEmbedder;
    const res = await ctx.stack.api.post(`/pipelines/${pipelineId}/documents:batch`, {
      documents: [
        { content: 'The sea is grey.', classification: 'public' },
        { content: 'Snow is white.', classification: 'public' },
      ],
    });
    await expectStatus(Promise.resolve(res), 202);
    await documentsReady(
      ctx.stack.api,
      pipelineId,
      res.body.data.map((d: { id: string }) => d.id),
    );
  },
};

const agent = (ctx: Context, id: 'agent' | 'referenceAgent') =>
  [`/agents/${ctx.ids[id]}/execute`, QUESTION, agentHeaders(ctx)] as [
    string,
    unknown,
    Record<string, string>,
  ];
const gateway = (ctx: Context, prompt: string) =>
  ['/api/gateway/execute', { prompt }, { 'x-llm-id': ctx.ids.llm }] as [
    string,
    unknown,
    Record<string, string>,
  ];

export const SCENARIOS: Scenario[] = [
  ingestion('ingestion-success', 'pipeline', 'The sky is blue.'),
  ingestion('ingestion-retry', 'flakyEmbedder', 'Grass is green.', { failFirst: { count: 1, status: 500 } }),
  batchIngestion,
  request('agent-success', 1, { m: { text: 'Blue.' } }, (ctx) => agent(ctx, 'agent')),
  request('agent-retry', 1, { m: { text: 'Blue.', sequence: [{ fail: 500 }, 'ok'] } }, (ctx) =>
    agent(ctx, 'agent'),
  ),
  {
    name: 'agent-cancel',
    workflows: 1,
    async run(ctx) {
      ctx.fake.script('m', { text: 'word '.repeat(100), deltaDelayMs: 200 });
      const live = await fetch(`${ctx.stack.url}/agents/${ctx.ids.agent}/execute`, {
        method: 'POST',
        headers: ctx.stack.api.headers({ 'content-type': 'application/json', ...agentHeaders(ctx) }),
        body: JSON.stringify(QUESTION),
      });
      const id = live.headers.get('x-agentry-execution-id');
      await waitFor(() => ctx.fake.requestsFor('m').length === 1, { what: 'the model request' });
      await expectStatus(ctx.stack.api.delete(`/executions/${id}`), 202);
      await live.text();
    },
  },
  request('agent-execute-reference', 2, { m: { text: 'Blue.' }, exec: { text: 'Calm.' } }, (ctx) =>
    agent(ctx, 'referenceAgent'),
  ),
  request('llm-query-success', 1, { m: { text: 'Hi.' } }, (ctx) => [`/llms/${ctx.ids.llm}/query`, QUERY]),
  request('llm-query-retry', 1, { m: { text: 'Hi.', sequence: [{ fail: 429 }, 'ok'] } }, (ctx) => [
    `/llms/${ctx.ids.llm}/query`,
    QUERY,
  ]),
  request('prompt-execution-success', 1, { m: { text: 'Done.' } }, (ctx) =>
    gateway(ctx, 'Use {{prompt:rules}}.'),
  ),
  request('prompt-execution-execute-reference', 2, { m: { text: 'Done.' }, exec: { text: 'Calm.' } }, (ctx) =>
    gateway(ctx, 'Forecast: {{prompt:forecast}}.'),
  ),
  {
    name: 'content-retention',
    workflows: 1,
    retention: true,
    // The deployment's schedule starts the sweep; a triggered run is recorded like a timed one.
    run: (ctx) =>
      ctx.stack.temporal.schedule.getHandle(retentionScheduleId(ctx.stack.env.config.taskQueue)).trigger(),
  },
  {
    name: 'vector-index-rebuild',
    workflows: 1,
    run: (ctx) =>
      expectStatus(ctx.stack.api.post(`/embedding_models/${ctx.ids.embeddingModel}/index:rebuild`, {}), 202),
  },
  request('chain-success', 3, { exec: { text: 'Step.' } }, (ctx) => [
    `/api/v1/chains/${ctx.ids.chain}/execute`,
    { inputs: {} },
  ]),
];
