// Records the workflow histories that test/integration/replay.test.ts replays (issue 13 item 4):
// one stack as the integration tests build it (a Temporal dev server, the test database template,
// the workflow bundle, the fake model server), each scenario run through the API, and every
// workflow it started (children included) written to test/fixtures/histories/<scenario>.<type>.json
// in the SDK's history JSON. Payloads stay encrypted with TEST_APPLICATION_SECRET, a test-only
// secret the replay worker's codec uses too. Run it with `npm run record-histories`
// (docs/operations.md, "Changing a workflow safely").
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeModelServer, type FakeModelServer } from '../test/fakes/fake-model-server';
import { RETENTION_WORKFLOW_TYPE } from '../infra/retention-schedule';
import globalSetup from '../test/helpers/global-setup';
import globalTeardown from '../test/helpers/global-teardown';
import { seedPipeline } from '../test/helpers/knowledge';
import { startStack, type Stack } from '../test/helpers/stack';
import { until } from '../test/helpers/wait';
import { SCENARIOS, type Context } from './history-scenarios';

export const HISTORIES_DIR = path.join(__dirname, '..', 'test', 'fixtures', 'histories');

async function setUp(stack: Stack, fake: FakeModelServer): Promise<Context> {
  const { api } = stack;
  const llm = async (model: string) =>
    (await api.post('/llms', { name: `llm-${model}`, endpoint: fake.url, model, api_key: 'k' })).body
      .id as string;
  const llmId = await llm('m');
  const execLlm = await llm('exec');
  await api.post('/api/v1/prompts', { promptId: 'rules', name: 'Rules', userPrompt: 'Be brief.' });
  // Two EXECUTE prompts: an answer one scenario cached would not start the other's child.
  for (const promptId of ['outlook', 'forecast'])
    await api.post('/api/v1/prompts', {
      promptId,
      name: promptId,
      userPrompt: 'One word.',
      customGatewayId: execLlm,
    });
  const { pipelineId } = await seedPipeline(api, { name: 'kb' });
  const { pipelineId: flakyEmbedder } = await seedPipeline(api, {
    name: 'kb-flaky',
    embeddingModel: {
      name: 'flaky-embedder',
      provider: 'openai',
      size: 8,
      parameters: { endpoint: fake.url, model: 'emb', api_key: 'k' },
    },
  });
  // One agent answers from the pipeline; the other also runs the `outlook` EXECUTE reference.
  const createAgent = (name: string, system: string) =>
    api.post('/agents', {
      name,
      prompt: [
        { role: 'system', template: system },
        { role: 'user', template: '{context}\n{question}' },
      ],
      placeholders: [
        { name: 'question', type: 'query' },
        { name: 'context', type: 'similarity', target: 'question', params: { k: 1 } },
      ],
    });
  const agent = await createAgent('colours', 'Be brief.');
  const referenceAgent = await createAgent('colours-with-outlook', '{{prompt:outlook}}');
  const chain = await api.post('/api/v1/chains', {
    name: 'two steps',
    steps: [
      { order: 1, promptId: 'outlook', outputVariable: 'first' },
      { order: 2, promptId: 'outlook' },
    ],
  });
  for (const res of [agent, referenceAgent, chain])
    if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${res.text}`);
  return {
    stack,
    fake,
    ids: {
      llm: llmId,
      execLlm,
      pipeline: pipelineId,
      embeddingModel: (await api.get(`/pipelines/${pipelineId}`)).body.embedding_model_id as string,
      agent: agent.body.id,
      referenceAgent: referenceAgent.body.id,
      chain: chain.body.chainId,
      flakyEmbedder,
    },
  };
}

/** The closed workflows on the stack's task queue not in `seen`, oldest first, once there are `count`. */
async function newWorkflows(stack: Stack, seen: Set<string>, count: number, retention: boolean) {
  return until(
    async () => {
      const found = [];
      for await (const wf of stack.temporal.workflow.list({
        query: `TaskQueue="${stack.env.config.taskQueue}"`,
      }))
        if (!seen.has(wf.workflowId) && (wf.type === RETENTION_WORKFLOW_TYPE) === retention) found.push(wf);
      const closed = found.filter((wf) => wf.status.name !== 'RUNNING');
      if (found.length > count) throw new Error(`expected ${count} workflows, found ${found.length}`);
      return closed.length === count ? closed.sort((a, b) => +a.startTime - +b.startTime) : undefined;
    },
    { what: `${count} closed workflows`, timeoutMs: 60_000, intervalMs: 200 },
  );
}

async function record(ctx: Context, only: string[]): Promise<string[]> {
  const seen = new Set<string>();
  const scenarios = only.length > 0 ? SCENARIOS.filter((s) => only.includes(s.name)) : SCENARIOS;
  // Only this recorder's files: histories kept from before a patched change (other names) stay.
  const ours = new Set(scenarios.map((s) => s.name));
  for (const old of readdirSync(HISTORIES_DIR))
    if (old.endsWith('.json') && ours.has(old.split('.')[0]!)) rmSync(path.join(HISTORIES_DIR, old));
  const written: string[] = [];
  for (const scenario of scenarios) {
    ctx.fake.reset();
    await scenario.run(ctx);
    const workflows = await newWorkflows(ctx.stack, seen, scenario.workflows, scenario.retention ?? false);
    const perType = new Map<string, number>();
    for (const wf of workflows) {
      seen.add(wf.workflowId);
      const n = (perType.get(wf.type) ?? 0) + 1;
      perType.set(wf.type, n);
      const same = workflows.filter((w) => w.type === wf.type).length;
      const file = `${scenario.name}.${wf.type}${same > 1 ? `-${n}` : ''}.json`;
      const history = await ctx.stack.temporal.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      writeFileSync(path.join(HISTORIES_DIR, file), `${historyToJSON(history)}\n`);
      written.push(file);
    }
  }
  return written;
}

async function main(): Promise<void> {
  mkdirSync(HISTORIES_DIR, { recursive: true });
  await globalSetup();
  const fake = await startFakeModelServer();
  // Timed sweeps would land among the scenarios' workflows: only the triggered one is recorded.
  const stack = await startStack({ env: { AGENTRY_CONTENT_SWEEP_SECONDS: '86400' } });
  try {
    // Scenario names as arguments record only those (their files are replaced, the others kept).
    const written = await record(await setUp(stack, fake), process.argv.slice(2));
    console.log(`recorded ${written.length} histories in ${HISTORIES_DIR}:\n${written.join('\n')}`);
  } finally {
    await stack.stop();
    await fake.close();
    await globalTeardown();
  }
}

if (require.main === module)
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
