// Issue 13 "readable at a glance": every workflow starts with a summary and details of ids and
// names (Temporal user metadata, through the client's decoded describe), and every activity and
// local activity carries a summary in history; none of them holds content (question, answer),
// and in history they are encrypted like every payload, readable through the codec only.
import type { Payload } from '@temporalio/common';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal as proto } from '@temporalio/proto';
import { ENCRYPTED_ENCODING } from '../../infra/payload-codec';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { answerOf, parseNdjson } from '../helpers/http';
import { createRetrievalAgent, seedPipeline } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';

const EventType = proto.api.enums.v1.EventType;

let stack: Stack;
let fake: FakeModelServer;
let pipelineId: string;
let llmId: string;

const QUESTION = 'When does the cafeteria open?';
const ANSWER = 'Eight o clock sharp';

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  ({ pipelineId } = await seedPipeline(stack.api, {
    name: 'handbook',
    documents: ['The cafeteria opens at eight.'],
  }));
  llmId = (
    await stack.api.post('/llms', { name: 'house model', endpoint: fake.url, model: 'm', api_key: 'sk-x' })
  ).body.id;
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

async function decoded(payload: Payload | null | undefined): Promise<string | undefined> {
  if (!payload) return undefined;
  expect(Buffer.from(payload.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
  const [plain] = await stack.rt.codec.decode([payload]);
  return defaultPayloadConverter.fromPayload<string>(plain!);
}

/** The workflow's summary and details, and the summaries of its activities and local activities in history order. */
async function readableOf(executionId: string) {
  const handle = stack.temporal.workflow.getHandle(`execution-${executionId}`);
  await handle.result();
  const description = await handle.describe();
  const events = (await handle.fetchHistory()).events ?? [];
  const summaries = async (type: proto.api.enums.v1.EventType) =>
    Promise.all(events.filter((e) => e.eventType === type).map((e) => decoded(e.userMetadata?.summary)));
  return {
    summary: await description.staticSummary(),
    details: await description.staticDetails(),
    activities: await summaries(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
    localActivities: await summaries(EventType.EVENT_TYPE_MARKER_RECORDED),
  };
}

function expectNoContent(texts: (string | undefined)[]): void {
  for (const text of texts) {
    expect(text).toBeDefined();
    expect(text).not.toContain('cafeteria');
    expect(text).not.toContain('Eight');
  }
}

it('an agent execution: its summary names the agent and version, pipeline and LLM, its details their ids, and its timeline reads retrieve, render, call model, record', async () => {
  const agentId = await createRetrievalAgent(stack.api, 'Support desk');
  fake.script('m', { text: ANSWER });
  const res = await stack.api.post(
    `/agents/${agentId}/execute`,
    { prompt: { question: QUESTION }, classification: 'public' },
    { 'x-pipeline-id': pipelineId, 'x-llm-id': llmId },
  );
  expect(answerOf(parseNdjson(res.text))).toBe(ANSWER);
  const readable = await readableOf(res.headers.get('x-agentry-execution-id')!);

  expect(readable.summary).toBe(
    'agent execution · agent "Support desk" v1 · pipeline "handbook" · LLM "house model"',
  );
  for (const id of [agentId, pipelineId, llmId]) expect(readable.details).toContain(`\`${id}\``);
  expect(readable.activities).toEqual([`call model (LLM ${llmId})`]);
  expect(readable.localActivities).toEqual(['retrieve context {context}', 'render prompt', 'record outcome']);
  expectNoContent([readable.summary, readable.details, ...readable.activities, ...readable.localActivities]);
});

it('a direct LLM query: summary and details name the LLM, the model call its LLM', async () => {
  fake.script('m', { text: ANSWER });
  const res = await stack.api.post(`/llms/${llmId}/query`, {
    messages: [{ role: 'user', content: QUESTION }],
  });
  expect(answerOf(parseNdjson(res.text))).toBe(ANSWER);
  const readable = await readableOf(res.headers.get('x-agentry-execution-id')!);

  expect(readable.summary).toBe('LLM query · LLM "house model"');
  expect(readable.details).toBe(`**LLM query**\n- LLM: "house model" \`${llmId}\``);
  expect(readable.activities).toEqual([`call model (LLM ${llmId})`]);
  expect(readable.localActivities).toEqual(['record outcome']);
  expectNoContent([readable.summary, readable.details, ...readable.activities, ...readable.localActivities]);
});

it('a chain and its step: the chain names itself, the step child (started by the workflow) its chain, order and prompt', async () => {
  const promptId = 'glance.intake';
  const created = await stack.api.post('/api/v1/prompts', {
    promptId,
    name: promptId,
    userPrompt: `Summarise: ${QUESTION}`,
    customGatewayId: llmId,
  });
  expect(created.status).toBe(201);
  const chain = await stack.api.post('/api/v1/chains', {
    name: 'Intake chain',
    steps: [{ order: 1, promptId }],
  });
  expect(chain.status).toBe(201);
  const { chainId } = chain.body;
  fake.script('m', { text: ANSWER });
  const res = await stack.api.post(`/api/v1/chains/${chainId}/execute`, { inputs: {} });
  expect(res.status).toBe(200);
  const chainExecutionId = res.body.chainExecutionId as string;
  const chainView = await readableOf(chainExecutionId);
  expect(chainView.summary).toBe('chain · chain "Intake chain"');
  expect(chainView.activities).toEqual(['prepare chain step', 'record chain outcome']);

  const [step] = await stack.rt
    .db('executions')
    .where({ parent_execution_id: chainExecutionId })
    .select('id');
  const stepView = await readableOf(step.id);
  expect(stepView.summary).toBe(`chain step · chain ${chainId} · step 1 · prompt ${promptId}`);
  expect(stepView.details).toContain(`- parent execution: \`${chainExecutionId}\``);
  expect(stepView.activities).toEqual([`call model (LLM ${llmId})`]);
  expect(stepView.localActivities).toEqual([
    'plan prompt execution',
    'render prompt',
    'record answer',
    'record outcome',
  ]);
  expectNoContent([chainView.summary, chainView.details, stepView.summary, stepView.details]);
});
