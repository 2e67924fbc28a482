// The shape of an execution's workflow (docs/decisions.md "One workflow task before the model
// call"): every step before the model call is a local activity in the first workflow task, the
// model call is the one activity, and the record is finished in the task its completion opens.
// Two workflow tasks in all: a change that adds a round trip through the server fails here.
import { temporal as proto } from '@temporalio/proto';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { localActivityMarkers, localActivityResults } from '../helpers/history-text';
import { answerOf, parseNdjson } from '../helpers/http';
import { documentsReady, seedPipeline } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';

const EventType = proto.api.enums.v1.EventType;

let stack: Stack;
let fake: FakeModelServer;
let pipelineId: string;
let llmId: string;

interface Shape {
  workflowTasks: number;
  activities: string[];
  localActivities: string[];
}

/** Workflow tasks, activities and local activities (in history order) of a closed execution. */
async function shapeOf(executionId: string): Promise<Shape> {
  const handle = stack.temporal.workflow.getHandle(`execution-${executionId}`);
  await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  return {
    workflowTasks: events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length,
    activities: events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
    localActivities: localActivityMarkers(events).map((m) => m.activity_type),
  };
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  ({ pipelineId } = await seedPipeline(stack.api, {
    name: 'kb',
    documents: ['The vault rotates credentials.\nThe cafeteria opens at eight.'],
  }));
  llmId = (await stack.api.post('/llms', { name: 'fake', endpoint: fake.url, model: 'm', api_key: 'sk-x' }))
    .body.id;
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

it('an agent execution with two retrieval placeholders and a trace: 2 workflow tasks, the model call the only activity, one retrieval per placeholder before render and trace', async () => {
  const agent = await stack.api.post('/agents', {
    name: 'two-contexts',
    prompt: [
      { role: 'system', template: 'Answer from the context.' },
      { role: 'user', template: '{first}\n{second}\nQuestion: {question}' },
    ],
    placeholders: [
      { name: 'question', type: 'query' },
      { name: 'second', type: 'similarity', target: 'question', params: { k: 1 } },
      { name: 'first', type: 'mmr', target: 'question', params: { k: 1, fetch_k: 2, lambda_mult: 0.5 } },
    ],
  });
  expect(agent.status).toBe(201);
  fake.script('m', { text: 'Eight o clock' });
  const res = await stack.api.post(
    `/agents/${agent.body.id}/execute`,
    { prompt: { question: 'When does the cafeteria open?' }, classification: 'public', tracing: true },
    { 'x-pipeline-id': pipelineId, 'x-llm-id': llmId },
  );
  expect(res.status).toBe(200);
  expect(answerOf(parseNdjson(res.text))).toBe('Eight o clock');
  expect(await shapeOf(res.headers.get('x-agentry-execution-id')!)).toEqual({
    workflowTasks: 2,
    activities: ['callModel'],
    localActivities: [
      'retrieveFragments',
      'retrieveFragments',
      'renderPrompt',
      'storeTrace',
      'finishExecution',
    ],
  });
});

it('EX-2: retrieval runs one placeholder after the other in the order the placeholders list declares them', async () => {
  // Two documents told apart by metadata; each placeholder's request filter keeps one of them.
  const docIds: Record<string, string> = {};
  for (const [doc, content] of [
    ['a', 'The archive closes at noon.'],
    ['b', 'The bakery sells rye bread.'],
  ] as const) {
    const posted = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content,
      classification: 'public',
      metadata: { doc },
    });
    expect(posted.status).toBe(202);
    docIds[doc] = posted.body.id;
  }
  await documentsReady(stack.api, pipelineId, Object.values(docIds));
  const fragmentsOf = async (documentId: string): Promise<string[]> =>
    (await stack.rt.db('fragments').where({ document_id: documentId, current: true }).select('id')).map(
      (r: { id: string }) => r.id,
    );
  const agent = await stack.api.post('/agents', {
    name: 'declared-order',
    prompt: [
      { role: 'system', template: 'Answer from the context.' },
      { role: 'user', template: '{alpha}\n{zeta}\nQuestion: {question}' },
    ],
    // Declared zeta first: neither alphabetical nor the order the template uses them in.
    placeholders: [
      { name: 'question', type: 'query' },
      { name: 'zeta', type: 'similarity', target: 'question', params: { k: 1 } },
      { name: 'alpha', type: 'similarity', target: 'question', params: { k: 1 } },
    ],
  });
  expect(agent.status).toBe(201);
  fake.script('m', { text: 'Noon' });
  const res = await stack.api.post(
    `/agents/${agent.body.id}/execute`,
    {
      prompt: { question: 'When does it close?' },
      classification: 'public',
      filters: { zeta: { doc: { $eq: 'b' } }, alpha: { doc: { $eq: 'a' } } },
    },
    { 'x-pipeline-id': pipelineId, 'x-llm-id': llmId },
  );
  expect(res.status).toBe(200);
  const handle = stack.temporal.workflow.getHandle(`execution-${res.headers.get('x-agentry-execution-id')}`);
  await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  const retrieved = (await localActivityResults(events, 'retrieveFragments', stack.rt.codec)) as {
    id: string;
  }[][];
  expect(retrieved.map((refs) => refs.map((r) => r.id))).toEqual([
    await fragmentsOf(docIds.b!),
    await fragmentsOf(docIds.a!),
  ]);
});

it('a direct query: 2 workflow tasks, the model call, then the record', async () => {
  fake.script('m', { text: 'Hello' });
  const res = await stack.api.post(`/llms/${llmId}/query`, { messages: [{ role: 'user', content: 'Hi' }] });
  expect(res.status).toBe(200);
  expect(await shapeOf(res.headers.get('x-agentry-execution-id')!)).toEqual({
    workflowTasks: 2,
    activities: ['callModel'],
    localActivities: ['finishExecution'],
  });
});
