// AGENTRY_API_RUNS_WORKER: an API process that runs a worker of its own on the task queue (one
// shared Temporal connection, eager workflow starts) serves executions with no worker process.
import { Client, Connection } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { testEnv } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { Api, answerOf, parseNdjson } from '../helpers/http';
import { startApiProcess, type Child } from '../helpers/processes';
import { deleteRetentionSchedule } from '../helpers/schedules';
import { TEMPORAL_ADDRESS } from '../helpers/services';
import { waitFor } from '../helpers/wait';

let database: TestDatabase;
let api: Child;
let fake: FakeModelServer;
let admin: Api;
let temporal: Client;
let taskQueue: string;

beforeAll(async () => {
  fake = await startFakeModelServer();
  database = await createTestDatabase();
  const env = testEnv(database.url, { AGENTRY_API_RUNS_WORKER: 'true' });
  taskQueue = env.config.taskQueue;
  api = await startApiProcess(env.env);
  admin = new Api(`http://127.0.0.1:${api.port}`, { id: env.adminKeyId, secret: env.adminKeySecret });
  temporal = new Client({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
});

afterAll(async () => {
  await api?.kill('SIGTERM');
  if (temporal) await deleteRetentionSchedule(taskQueue, temporal);
  await temporal?.connection.close();
  await database?.drop();
  await fake?.close();
});

it('AGENTRY_API_RUNS_WORKER=true: a direct query streams its answer with only the API process running, in the usual two workflow tasks', async () => {
  const llm = await admin.post('/llms', {
    name: 'fake',
    endpoint: fake.url,
    model: 'solo',
    api_key: 'sk-solo',
  });
  expect(llm.status).toBe(201);
  fake.script('solo', { text: 'Served by the API alone.' });
  const res = await admin.post(`/llms/${llm.body.id}/query`, { messages: [{ role: 'user', content: 'Hi' }] });
  expect(res.status).toBe(200);
  expect(answerOf(parseNdjson(res.text))).toBe('Served by the API alone.');
  const handle = temporal.workflow.getHandle(`execution-${res.headers.get('x-agentry-execution-id')}`);
  // The result is encrypted (no codec here): wait for the workflow to close instead.
  await waitFor(async () => (await handle.describe()).status.name !== 'RUNNING', {
    what: 'the workflow to close',
    intervalMs: 100,
  });
  expect((await handle.describe()).status.name).toBe('COMPLETED');
  const events = (await handle.fetchHistory()).events ?? [];
  const completed = events.filter(
    (e) => e.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  );
  expect(completed).toHaveLength(2);
});
