// LLM-3/§9.5/§9.6 on real processes (built dist/): the worker is killed (SIGKILL) while it streams
// an agent's answer to a client that stays connected to the API process. The heartbeat timeout
// detects the dead worker, a new worker process runs the next attempt, and the client receives a
// `reset`, then the complete answer and exactly one terminal `done`; the model was asked twice.
import { Client as PgClient } from 'pg';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { testEnv, type TestEnv } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { Api, answerOf } from '../helpers/http';
import { startApiProcess, startWorkerProcess, type Child } from '../helpers/processes';

const MODEL = 'slow-gpt';
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
/** 40 words, streamed one per delta, 100 ms apart: about 4 s per attempt. */
const ANSWER = Array.from({ length: 40 }, (_, i) => `${WORDS[i % WORDS.length]}${i}`).join(' ');

let database: TestDatabase;
let env: TestEnv;
let api: Child;
let workers: Child[] = [];
let fake: FakeModelServer;
let admin: Api;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  fake = await startFakeModelServer();
  fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100 });
  database = await createTestDatabase();
  env = testEnv(database.url, { AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS: '3000' });
  const [apiChild, worker] = await Promise.all([startApiProcess(env.env), startWorkerProcess(env.env)]);
  api = apiChild;
  workers.push(worker);
  admin = new Api(`http://127.0.0.1:${api.port}`, { id: env.adminKeyId, secret: env.adminKeySecret });
});

afterAll(async () => {
  await Promise.all([api?.kill('SIGTERM'), ...workers.map((w) => w.kill('SIGTERM'))]);
  workers = [];
  await database?.drop();
  await fake?.close();
});

/** The pipeline, LLM and agent of seed 000, with one document. */
async function setUp(): Promise<{ agentId: string; pipelineId: string; llmId: string }> {
  const model = await admin.post('/embedding_models', { name: 'hash', provider: 'hash', size: 64 });
  const splitter = await admin.post('/text_splitters', {
    name: 'paragraphs',
    provider: 'character',
    parameters: { separator: '\n\n', chunk_size: 1000, chunk_overlap: 0 },
  });
  const pipeline = await admin.post('/pipelines', {
    name: 'kb',
    embedding_model_id: model.body.id,
    text_splitter_id: splitter.body.id,
    classifications: [{ name: 'internal' }],
  });
  expect(pipeline.status).toBe(201);
  const doc = await admin.post(`/pipelines/${pipeline.body.id}/documents`, {
    content: 'Database credentials rotate every 30 days.',
    classification: 'internal',
  });
  expect(doc.status).toBe(202);
  for (let i = 0; ; i++) {
    const res = await admin.get(`/pipelines/${pipeline.body.id}/documents/${doc.body.id}`);
    if (res.body.status === 'ready') break;
    if (res.body.status === 'failed' || i > 300) throw new Error(`ingestion: ${JSON.stringify(res.body)}`);
    await sleep(100);
  }
  const llm = await admin.post('/llms', { name: 'slow', endpoint: fake.url, model: MODEL, api_key: 'sk-x' });
  expect(llm.status).toBe(201);
  const agent = await admin.post('/agents', {
    name: 'support-answers',
    prompt: [
      { role: 'system', template: 'Answer using only the reference text.' },
      { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}' },
    ],
    placeholders: [
      { name: 'question', type: 'query' },
      { name: 'context', type: 'similarity', target: 'question' },
    ],
  });
  expect(agent.status).toBe(201);
  return { agentId: agent.body.id, pipelineId: pipeline.body.id, llmId: llm.body.id };
}

/** Reads an NDJSON response as it arrives; `events` grows while the stream is open. */
function readNdjson(res: Response): { events: any[]; ended: Promise<void> } {
  const events: any[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) if (line.trim() !== '') events.push(JSON.parse(line));
    }
    if (buffered.trim() !== '') events.push(JSON.parse(buffered));
  })();
  return { events, ended };
}

async function until(what: string, timeoutMs: number, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('a worker killed while streaming an agent answer', () => {
  it('LLM-3/§9.5: SIGKILL mid-stream, a new worker: the connected client gets reset, the complete answer and one done; 2 model requests', async () => {
    const { agentId, pipelineId, llmId } = await setUp();
    const res = await fetch(`${admin.baseUrl}/agents/${agentId}/execute`, {
      method: 'POST',
      headers: admin.headers({
        'content-type': 'application/json',
        'x-pipeline-id': pipelineId,
        'x-llm-id': llmId,
      }),
      body: JSON.stringify({
        prompt: { question: 'How do I rotate the database credentials?' },
        classification: 'internal',
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const executionId = res.headers.get('x-agentry-execution-id')!;
    const stream = readNdjson(res);

    // A few deltas of attempt 1 reached the client, then the worker dies without warning.
    await until(
      'the first deltas',
      20_000,
      () => stream.events.filter((e) => e.type === 'delta').length >= 3,
    );
    await workers[0]!.kill('SIGKILL');
    const killedAt = Date.now();
    const beforeKill = stream.events.length;
    expect(stream.events.every((e) => e.type === 'delta' && e.attempt === 1)).toBe(true);
    expect(fake.requestsFor(MODEL)).toHaveLength(1);

    workers.push(await startWorkerProcess(env.env));
    await stream.ended;
    const events = stream.events;

    // Attempt 1's text, one reset to attempt 2, attempt 2's complete answer, one terminal done.
    const reset = events.findIndex((e) => e.type === 'reset');
    expect(reset).toBeGreaterThanOrEqual(beforeKill);
    expect(events[reset]).toEqual({ type: 'reset', seq: reset + 1, attempt: 2 });
    expect(events.filter((e) => e.type === 'reset')).toHaveLength(1);
    expect(events.slice(0, reset).every((e) => e.type === 'delta' && e.attempt === 1)).toBe(true);
    expect(events.slice(reset + 1, -1).every((e) => e.type === 'delta' && e.attempt === 2)).toBe(true);
    expect(
      events
        .slice(reset + 1, -1)
        .map((e) => e.text)
        .join(''),
    ).toBe(ANSWER);
    expect(answerOf(events)).toBe(ANSWER);
    expect(events.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
    expect(events[events.length - 1]).toMatchObject({
      type: 'done',
      attempt: 2,
      usage: { output_tokens: 40 },
    });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // The dead worker was noticed by the heartbeat timeout (3 s), not by the start-to-close one.
    expect(Date.now() - killedAt).toBeLessThan(25_000);

    // The model was asked twice: the first request was cut off when the worker died.
    const requests = fake.requestsFor(MODEL);
    expect(requests).toHaveLength(2);
    expect(requests[0]!.aborted).toBe(true);
    expect(requests[1]!.aborted).toBe(false);
    expect(requests[1]!.body).toEqual(requests[0]!.body);

    // The record shows the second attempt and success once the workflow closed.
    const db = new PgClient({ connectionString: database.url });
    await db.connect();
    try {
      let row: any;
      for (let i = 0; i < 150; i++) {
        row = (
          await db.query('SELECT status, attempts, agent_version FROM executions WHERE id = $1', [
            executionId,
          ])
        ).rows[0];
        if (row?.status !== 'running') break;
        await sleep(100);
      }
      expect(row).toEqual({ status: 'succeeded', attempts: 2, agent_version: 1 });
    } finally {
      await db.end();
    }
  }, 60_000);
});
