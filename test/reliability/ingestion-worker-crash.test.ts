// DOC-3 on real processes (built dist/): the worker is killed (SIGKILL) in the middle of embedding
// a 500-fragment document; a new worker process takes over and the document becomes `ready` with
// exactly its 500 fragments, none lost and none stored twice, although some texts were sent to
// the embedding server twice.
import { Client } from 'pg';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import type { Api } from '../helpers/http';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { documentSettled } from '../helpers/knowledge';
import { waitFor } from '../helpers/wait';

const MODEL = 'slow-embed';
const FRAGMENTS = 500;
const BATCH = 20;

let stack: ProcessStack;
let fake: FakeModelServer;
let admin: Api;

/**
 * 500 distinct paragraphs of 100–199 characters with letters: the `character` splitter (separator
 * "\n\n", chunk 200, overlap 0) cannot merge two of them, so each becomes exactly one fragment.
 */
const PARAGRAPHS = Array.from({ length: FRAGMENTS }, (_, i) => {
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
  let text = `Paragraph ${i} of the crash manual:`;
  for (let j = 0; text.length < 120; j++) text += ` ${words[(i * 7 + j * 3) % words.length]}${(i + j) % 13}`;
  return text;
});

beforeAll(async () => {
  fake = await startFakeModelServer();
  fake.scriptEmbeddings(MODEL, { size: 16, delayMs: 150 });
  stack = await startProcessStack({
    AGENTRY_INGESTION_BATCH_SIZE: String(BATCH),
    AGENTRY_INGESTION_PARALLELISM: '1',
    AGENTRY_INGESTION_HEARTBEAT_TIMEOUT_MS: '2000',
  });
  admin = stack.admin;
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('reliability: a worker killed during ingestion', () => {
  it('DOC-3: a worker killed while embedding a 500-fragment document: after restart it becomes ready with exactly the expected fragments (no duplicates, no loss)', async () => {
    expect(new Set(PARAGRAPHS).size).toBe(FRAGMENTS);
    expect(PARAGRAPHS.every((p) => p.length >= 100 && p.length < 200 && /[a-z]/.test(p))).toBe(true);

    const model = await admin.post('/embedding_models', {
      name: 'slow',
      provider: 'openai',
      size: 16,
      parameters: { endpoint: fake.url, model: MODEL, api_key: 'sk-slow' },
    });
    expect(model.status).toBe(201);
    const splitter = await admin.post('/text_splitters', {
      name: 'paragraphs',
      provider: 'character',
      parameters: { separator: '\n\n', chunk_size: 200, chunk_overlap: 0 },
    });
    expect(splitter.status).toBe(201);
    const pipeline = await admin.post('/pipelines', {
      name: 'crash-manual',
      embedding_model_id: model.body.id,
      text_splitter_id: splitter.body.id,
      classifications: [{ name: 'public' }],
    });
    expect(pipeline.status).toBe(201);
    const pipelineId = pipeline.body.id as string;

    const posted = await admin.post(`/pipelines/${pipelineId}/documents`, {
      content: PARAGRAPHS.join('\n\n'),
      classification: 'public',
      external_id: 'crash-manual',
    });
    expect(posted.status).toBe(202);
    const documentId = posted.body.id as string;
    const document = `/pipelines/${pipelineId}/documents/${documentId}`;

    // A few of the 25 batches are embedded (150 ms each), then the worker dies without warning.
    await waitFor(() => fake.embeddingRequestsFor(MODEL).length >= 4, {
      what: 'the first embedding requests',
      timeoutMs: 30_000,
    });
    await stack.worker.kill('SIGKILL');
    const atKill = fake.embeddingRequestsFor(MODEL).length;
    expect(atKill).toBeLessThan(FRAGMENTS / BATCH);
    expect((await admin.get(document)).body.status).toBe('processing');

    await stack.startWorker();
    // Nothing reached the embedding server while no worker ran.
    expect(fake.embeddingRequestsFor(MODEL).length).toBe(atKill);
    const ready = await documentSettled(admin, pipelineId, documentId);
    expect(ready).toMatchObject({ status: 'ready', expired_at: null });

    // The API shows exactly the 500 paragraphs, in order.
    const fragments = await admin.get(`${document}/fragments`);
    expect(fragments.status).toBe(200);
    expect(fragments.body.data.map((f: any) => f.page_content)).toEqual(PARAGRAPHS);
    expect(new Set(fragments.body.data.map((f: any) => f.id)).size).toBe(FRAGMENTS);

    // The database holds exactly 500 fragment rows for the version, each embedded and current.
    const db = new Client({ connectionString: stack.database.url });
    await db.connect();
    try {
      const versions = await db.query('SELECT id FROM document_versions WHERE document_id = $1', [
        documentId,
      ]);
      expect(versions.rows).toHaveLength(1);
      const stats = await db.query(
        `SELECT count(*)::int AS rows, count(DISTINCT ordinal)::int AS ordinals, count(embedding)::int AS embedded,
                count(*) FILTER (WHERE current AND expired_at IS NULL)::int AS current,
                min(ordinal) AS first, max(ordinal) AS last
           FROM fragments WHERE document_version_id = $1`,
        [versions.rows[0].id],
      );
      expect(stats.rows[0]).toEqual({
        rows: FRAGMENTS,
        ordinals: FRAGMENTS,
        embedded: FRAGMENTS,
        current: FRAGMENTS,
        first: 0,
        last: FRAGMENTS - 1,
      });
      const all = await db.query('SELECT count(*)::int AS n FROM fragments WHERE document_id = $1', [
        documentId,
      ]);
      expect(all.rows[0].n).toBe(FRAGMENTS);
    } finally {
      await db.end();
    }

    // Work resumed on the new worker, and every paragraph was sent at least once (some twice:
    // the batch in flight when the worker died is embedded again).
    const requests = fake.embeddingRequestsFor(MODEL);
    expect(requests.length).toBeGreaterThan(atKill);
    const sent = requests.flatMap((r) => r.body.input as string[]);
    expect(sent.length).toBeGreaterThanOrEqual(FRAGMENTS);
    expect(new Set(sent)).toEqual(new Set(PARAGRAPHS));

    // Search sees each paragraph once.
    const hits = await admin.post(`/pipelines/${pipelineId}/search`, {
      query: PARAGRAPHS[321]!,
      classification: 'public',
      k: 3,
    });
    expect(hits.status).toBe(200);
    expect(hits.body.data[0].page_content).toBe(PARAGRAPHS[321]);
    expect(new Set(hits.body.data.map((f: any) => f.page_content)).size).toBe(hits.body.data.length);
  }, 90_000);

  it('DOC-3: an embedding activity that outlasts the heartbeat timeout while making progress keeps its attempt (no text embedded twice)', async () => {
    // One text per server request, 150 ms each: a 20-fragment activity takes ~3 s, longer than
    // the 2 s heartbeat timeout, although the worker is alive and every request succeeds.
    fake.scriptEmbeddings('one-by-one', { size: 16, delayMs: 150 });
    const model = await admin.post('/embedding_models', {
      name: 'one-by-one',
      provider: 'openai',
      size: 16,
      parameters: { endpoint: fake.url, model: 'one-by-one', api_key: 'sk-slow', batch_size: 1 },
    });
    expect(model.status).toBe(201);
    const splitterId = (await admin.get('/text_splitters?name=paragraphs')).body.data[0].id;
    const pipeline = await admin.post('/pipelines', {
      name: 'one-by-one',
      embedding_model_id: model.body.id,
      text_splitter_id: splitterId,
      classifications: [{ name: 'public' }],
    });
    expect(pipeline.status).toBe(201);
    const paragraphs = PARAGRAPHS.slice(0, 2 * BATCH);
    const posted = await admin.post(`/pipelines/${pipeline.body.id}/documents`, {
      content: paragraphs.join('\n\n'),
      classification: 'public',
    });
    expect(posted.status).toBe(202);
    const ready = await documentSettled(admin, pipeline.body.id, posted.body.id);
    expect(ready.status).toBe('ready');
    const sent = fake.embeddingRequestsFor('one-by-one').flatMap((r) => r.body.input as string[]);
    expect(sent.sort()).toEqual([...paragraphs].sort());
  }, 60_000);
});
