// PostgreSQL connections dropped under the processes (§9.3, DOC-3): every backend of the test
// database is terminated (pg_terminate_backend) while an execution retrieves its fragments and,
// repeatedly, while a document is ingested. A table lock held by the test makes sure the query
// is in flight at that moment. Activities retry on fresh connections; the execution answers
// exactly once and the document gets exactly its fragments.
import { Client } from 'pg';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { TEMPORAL_ADDRESS } from '../helpers/services';
import { documentSettled } from '../helpers/knowledge';
import { waitFor } from '../helpers/wait';
import {
  executeAgent,
  expectCleanAnswer,
  resets,
  scriptedAnswer,
  seedAgent,
  type SeededAgent,
} from '../helpers/agent-streams';
import { activityRuns, finishedRecord, localActivityAttempts, metricSample, whileLocked } from './support';

const MODEL = 'pg-gpt';
const EMBEDDER = 'pg-embed';
const ANSWER = scriptedAnswer(20);
const FRAGMENTS = 200;
/** A dropped connection fails the query with pg's DatabaseError or a plain connection Error. */
const DATABASE_ERROR = expect.stringMatching(/^(Database)?Error$/);
const BATCH = 20;

let stack: ProcessStack;
let fake: FakeModelServer;
let agent: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  fake.scriptEmbeddings(EMBEDDER, { size: 16 });
  stack = await startProcessStack({
    AGENTRY_INGESTION_BATCH_SIZE: String(BATCH),
    AGENTRY_INGESTION_PARALLELISM: '1',
    AGENTRY_INGESTION_MAX_ATTEMPTS: '10',
  });
  agent = await seedAgent(stack.admin, fake, { model: MODEL, embeddingModel: EMBEDDER });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('reliability: PostgreSQL connections dropped', () => {
  it('§9.3/EX-2: the retrieval query is in flight when every connection is dropped, twice: the retrieval activity retries on fresh connections, the execution answers once; 1 model call', async () => {
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 20 });
    let execution: ReturnType<typeof executeAgent> | undefined;
    // The search reads `fragments`: it queues behind the lock until its connection is dropped.
    await whileLocked(stack.database.url, 'fragments', 'ACCESS EXCLUSIVE', async (lock) => {
      execution = executeAgent(stack.admin, agent);
      await lock.dropBlocked(2);
    });
    const stream = await execution!;
    expect(stream.status).toBe(200);
    await stream.ended;
    expectCleanAnswer(stream.events, ANSWER, 1);
    expect(resets(stream.events)).toHaveLength(0);
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
    // Two attempts failed on their dropped connection (a database error, not one of our failure
    // types: `other`); the third ran after the lock was released. Retrieval is a local activity.
    expect(
      await localActivityAttempts(TEMPORAL_ADDRESS, `execution-${stream.executionId}`, 'retrieveFragments'),
    ).toEqual([3]);
    const metrics = await (await fetch(`http://127.0.0.1:${stack.worker.metricsPort}/metrics`)).text();
    expect(
      metricSample(metrics, 'agentry_activity_failures_total', {
        activity: 'retrieveFragments',
        type: 'other',
      }),
    ).toBe(2);
    expect(await finishedRecord(stack.database.url, stream.executionId)).toEqual({
      status: 'succeeded',
      attempts: 1,
    });
  }, 90_000);

  it('§9.3/LLM-3: every connection is dropped, twice, while the streamed answer is being stored: the attempt stores it on a fresh connection instead of failing; no reset, 1 model call (the model is not paid twice)', async () => {
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 50 });
    const before = fake.requestsFor(MODEL).length;
    const execution = executeAgent(stack.admin, agent);
    // The rendered prompt is stored before the model is asked: once the request arrived, the
    // next write to execution_payloads is the answer's, and it queues behind the lock.
    await waitFor(() => fake.requestsFor(MODEL).length > before, {
      what: 'the model request',
      timeoutMs: 20_000,
    });
    await whileLocked(stack.database.url, 'execution_payloads', 'EXCLUSIVE', (lock) => lock.dropBlocked(2));
    const stream = await execution;
    expect(stream.status).toBe(200);
    await stream.ended;
    expectCleanAnswer(stream.events, ANSWER, 1);
    expect(resets(stream.events)).toHaveLength(0);
    expect(
      fake
        .requestsFor(MODEL)
        .slice(before)
        .map((r) => r.aborted),
    ).toEqual([false]);
    expect(await activityRuns(TEMPORAL_ADDRESS, `execution-${stream.executionId}`, 'callModel')).toEqual([
      { attempt: 1, previousFailure: undefined },
    ]);
    expect(await finishedRecord(stack.database.url, stream.executionId)).toEqual({
      status: 'succeeded',
      attempts: 1,
    });
  }, 90_000);

  it('DOC-3: every connection is dropped while the fragments are staged, twice while a batch of embeddings is written and twice while the fragments are copied: the document becomes ready with exactly its fragments (none lost, none twice)', async () => {
    fake.scriptEmbeddings(EMBEDDER, { size: 16, delayMs: 300 });
    const paragraphs = Array.from(
      { length: FRAGMENTS },
      (_, i) => `Paragraph ${i} of the outage manual: ${scriptedAnswer(12 + (i % 5))}.`,
    );
    // Paragraphs of 100–199 characters and chunks of at most 200: one fragment per paragraph.
    expect(paragraphs.every((p) => p.length >= 100 && p.length < 200)).toBe(true);
    const embeddingModelId = (await stack.admin.get(`/pipelines/${agent.pipelineId}`)).body
      .embedding_model_id;
    const splitter = await stack.admin.post('/text_splitters', {
      name: 'rel-paragraphs',
      provider: 'character',
      parameters: { separator: '\n\n', chunk_size: 200, chunk_overlap: 0 },
    });
    const pipeline = await stack.admin.post('/pipelines', {
      name: 'rel-outage-manual',
      embedding_model_id: embeddingModelId,
      text_splitter_id: splitter.body.id,
      classifications: [{ name: 'internal' }],
    });
    expect(pipeline.status).toBe(201);
    const pipelineId = pipeline.body.id as string;
    const before = fake.embeddingRequestsFor(EMBEDDER).length;
    let documentId = '';
    await whileLocked(stack.database.url, 'fragment_staging', 'EXCLUSIVE', async (lock) => {
      const posted = await stack.admin.post(`/pipelines/${pipelineId}/documents`, {
        content: paragraphs.join('\n\n'),
        classification: 'internal',
        external_id: 'outage-manual',
      });
      expect(posted.status).toBe(202);
      documentId = posted.body.id;
      await lock.dropBlocked(1); // staging the fragments (INSERT)
    });
    // An embedding request is in flight: writing its vectors (UPDATE) queues behind the lock.
    await waitFor(() => fake.embeddingRequestsFor(EMBEDDER).length > before, {
      what: 'the first embedding batch',
      timeoutMs: 30_000,
    });
    await whileLocked(stack.database.url, 'fragment_staging', 'EXCLUSIVE', (lock) => lock.dropBlocked(2));
    // Copying the staged fragments into `fragments` at the end.
    await whileLocked(stack.database.url, 'fragments', 'EXCLUSIVE', (lock) => lock.dropBlocked(2));
    const ready = await documentSettled(stack.admin, pipelineId, documentId);
    expect(ready).toMatchObject({ status: 'ready', expired_at: null });

    const db = new Client({ connectionString: stack.database.url });
    await db.connect();
    let versionId: string;
    try {
      const stats = await db.query(
        `SELECT count(*)::int AS rows, count(DISTINCT ordinal)::int AS ordinals, count(embedding)::int AS embedded,
                count(*) FILTER (WHERE current AND expired_at IS NULL)::int AS current
           FROM fragments WHERE document_id = $1`,
        [documentId],
      );
      expect(stats.rows[0]).toEqual({
        rows: FRAGMENTS,
        ordinals: FRAGMENTS,
        embedded: FRAGMENTS,
        current: FRAGMENTS,
      });
      expect((await db.query('SELECT count(*)::int AS n FROM fragment_staging')).rows[0].n).toBe(0);
      versionId = (await db.query('SELECT id FROM document_versions WHERE document_id = $1', [documentId]))
        .rows[0].id;
    } finally {
      await db.end();
    }
    const sent = fake
      .embeddingRequestsFor(EMBEDDER)
      .slice(before)
      .flatMap((r) => r.body.input as string[]);
    expect(new Set(sent)).toEqual(new Set(paragraphs));
    // The batch whose write was killed twice succeeded on its third attempt; the others on their
    // first (staging and copying are local activities, not listed in the history this way).
    const batches = await activityRuns(
      TEMPORAL_ADDRESS,
      `ingestion-${versionId}`,
      'embedFragments',
      FRAGMENTS / BATCH,
    );
    expect(batches).toHaveLength(FRAGMENTS / BATCH);
    expect(batches.filter((run) => run.attempt > 1)).toEqual([
      { attempt: 3, previousFailure: DATABASE_ERROR },
    ]);
  }, 120_000);
});
