// Issue 15 item 3: a documents:batch request is ingested by one workflow in groups, each document
// keeping its own version, status and failure; its progress is readable; a large load into a small
// set defers the model's HNSW index and builds it after the load, and searches stay correct while
// the index is absent or being built.
import { Client } from 'pg';
import { WorkflowNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startStack, type Stack } from '../helpers/stack';
import { until, waitFor } from '../helpers/wait';

let stack: Stack;
let fake: FakeModelServer;
let splitterId: string;

const HIERARCHY = [{ name: 'internal', includes: ['public'] }, { name: 'public' }];
const WORDS = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'jade'];
/** A paragraph of six words drawn from WORDS by `n` (distinct paragraphs for distinct n). */
const paragraph = (n: number): string =>
  Array.from({ length: 6 }, (_, i) => WORDS[Math.floor(n / 10 ** i) % 10]).join(' ') + ` p${n}.`;

async function createModel(name: string, body: Record<string, unknown> = { provider: 'hash', size: 32 }) {
  const res = await stack.api.post('/embedding_models', { name, ...body });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function createPipeline(name: string, embeddingModelId: string): Promise<string> {
  const res = await stack.api.post('/pipelines', {
    name,
    embedding_model_id: embeddingModelId,
    text_splitter_id: splitterId,
    classifications: HIERARCHY,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** Posts a batch; returns its id and documents once the batch's GET says done. */
async function ingestBatch(pipelineId: string, documents: Record<string, unknown>[]) {
  const res = await stack.api.post(`/pipelines/${pipelineId}/documents:batch`, { documents });
  expect(res.status).toBe(202);
  const batchId = res.body.batch_id as string;
  expect(res.headers.get('location')).toBe(`/pipelines/${pipelineId}/document_batches/${batchId}`);
  const progress = await until(
    async () => {
      const got = await stack.api.get(res.headers.get('location')!);
      expect(got.status).toBe(200);
      return got.body.status === 'done' ? got.body : undefined;
    },
    { what: `batch ${batchId} to finish`, timeoutMs: 60_000, intervalMs: 100 },
  );
  return { batchId, documents: res.body.data as { id: string }[], progress };
}

async function indexState(modelId: string): Promise<string> {
  return (await stack.api.get(`/embedding_models/${modelId}`)).body.index.state as string;
}

async function search(pipelineId: string, query: string, classification: string, filters?: unknown) {
  const res = await stack.api.post(`/pipelines/${pipelineId}/search`, {
    query,
    classification,
    k: 5,
    filters,
  });
  expect(res.status).toBe(200);
  return res.body.data as { id: string; classification: string; document_id: string; page_content: string }[];
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  const splitter = await stack.api.post('/text_splitters', {
    name: 'paragraphs',
    provider: 'character',
    parameters: { separator: '\n\n', chunk_size: 60, chunk_overlap: 0 },
  });
  splitterId = splitter.body.id;
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('issue 15: batch ingestion', () => {
  it('300 one-fragment documents: one workflow, every document ready with its own version, progress done/total', async () => {
    const modelId = await createModel('batch-small');
    const pipelineId = await createPipeline('batch-small', modelId);
    const documents = Array.from({ length: 300 }, (_, i) => ({
      content: paragraph(i),
      classification: i % 2 ? 'internal' : 'public',
      metadata: { i },
    }));
    const { batchId, documents: created, progress } = await ingestBatch(pipelineId, documents);
    expect(progress).toMatchObject({
      id: batchId,
      pipeline_id: pipelineId,
      status: 'done',
      documents: { total: 300, pending: 0, processing: 0, ready: 300, failed: 0 },
      fragments: { done: 300, total: 300 },
    });
    const statuses = await stack.rt
      .db('document_versions')
      .where({ batch_id: batchId })
      .select('status', 'fragment_count', 'document_id');
    expect(statuses).toHaveLength(300);
    expect(statuses.every((v) => v.status === 'ready' && v.fragment_count === 1)).toBe(true);
    expect(new Set(statuses.map((v) => v.document_id))).toEqual(new Set(created.map((d) => d.id)));
    const fragments = await stack.api.get(`/pipelines/${pipelineId}/documents/${created[7]!.id}/fragments`);
    expect(fragments.body.data).toEqual([
      expect.objectContaining({ page_content: paragraph(7), classification: 'internal', metadata: { i: 7 } }),
    ]);
    // One workflow for the batch, none per document.
    const handle = stack.temporal.workflow.getHandle(`ingestion-batch-${batchId}`);
    await expect(handle.result()).resolves.toEqual({ documents: 300 });
    const [version] = await stack.rt
      .db('document_versions')
      .where({ document_id: created[0]!.id })
      .select('id');
    await expect(
      stack.temporal.workflow.getHandle(`ingestion-${version.id}`).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('DOC-2 within a batch: a repeated external_id and an existing document get new versions; only the newest is current', async () => {
    const modelId = await createModel('batch-versions');
    const pipelineId = await createPipeline('batch-versions', modelId);
    const first = await ingestBatch(pipelineId, [
      { content: 'First words of the handbook.', classification: 'public', external_id: 'handbook' },
    ]);
    const second = await ingestBatch(pipelineId, [
      { content: 'Second words of the handbook.', classification: 'public', external_id: 'handbook' },
      { content: 'Third words of the handbook.', classification: 'public', external_id: 'handbook' },
      { content: 'A leaflet.', classification: 'public', external_id: 'leaflet' },
    ]);
    const documentId = first.documents[0]!.id;
    expect(second.documents.map((d) => d.id).slice(0, 2)).toEqual([documentId, documentId]);
    const versions = (await stack.api.get(`/pipelines/${pipelineId}/documents/${documentId}/versions`)).body
      .data;
    expect(
      versions.map((v: { status: string; expired_at: string | null }) => [v.status, v.expired_at === null]),
    ).toEqual([
      ['ready', false],
      ['ready', false],
      ['ready', true],
    ]);
    expect(new Set(versions.map((v: { version: number }) => v.version)).size).toBe(3);
    const current = await stack.api.get(`/pipelines/${pipelineId}/documents/${documentId}/fragments`);
    expect(current.body.data.map((f: { page_content: string }) => f.page_content)).toEqual([
      'Third words of the handbook.',
    ]);
    const live = await stack.rt
      .db('fragments')
      .where({ document_id: documentId })
      .whereNull('expired_at')
      .count({ n: '*' });
    expect(Number(live[0]!.n)).toBe(1);
  });

  it('an embedding server: small documents share its batches, and a document it refuses fails alone', async () => {
    fake.scriptEmbeddings('batch-emb', { size: 16, refuseInputContaining: 'FORBIDDEN' });
    const modelId = await createModel('batch-remote', {
      provider: 'openai',
      size: 16,
      parameters: { endpoint: fake.url, model: 'batch-emb', api_key: 'k', batch_size: 50 },
    });
    const pipelineId = await createPipeline('batch-remote', modelId);
    const before = fake.embeddingRequestsFor('batch-emb').length;
    const documents = Array.from({ length: 120 }, (_, i) => ({
      content: i === 42 ? 'A FORBIDDEN paragraph.' : paragraph(i),
      classification: 'public',
    }));
    const { documents: created, progress } = await ingestBatch(pipelineId, documents);
    expect(progress.documents).toEqual({ total: 120, pending: 0, processing: 0, ready: 119, failed: 1 });
    expect(progress.fragments).toEqual({ done: 119, total: 119 });
    const refused = await stack.api.get(`/pipelines/${pipelineId}/documents/${created[42]!.id}`);
    expect(refused.body).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/embedding server/i),
    });
    // 120 texts in server batches of 50 (a range of the workflow spans documents): the first
    // request carries 50 documents; it is refused, so each document is then embedded alone, once.
    const requests = fake.embeddingRequestsFor('batch-emb').slice(before);
    const inputs = requests.map((r) => r.body.input as string[]);
    expect(inputs[0]).toHaveLength(50);
    const alone = inputs.slice(1);
    expect(alone.every((input) => input.length === 1)).toBe(true);
    expect(alone.flat().sort()).toEqual(documents.map((d) => d.content).sort());
    const hits = await search(pipelineId, paragraph(7), 'public');
    expect(hits[0]!.page_content).toBe(paragraph(7));
  });

  it('an embedding server that stays unreachable: every document of the batch fails, naming it', async () => {
    const modelId = await createModel('batch-down', {
      provider: 'openai',
      size: 16,
      parameters: { endpoint: 'http://127.0.0.1:9/v1', model: 'nowhere', api_key: 'k' },
    });
    const pipelineId = await createPipeline('batch-down', modelId);
    const documents = [paragraph(1), paragraph(2), paragraph(3)].map((content) => ({
      content,
      classification: 'public',
    }));
    const { progress, documents: created } = await ingestBatch(pipelineId, documents);
    expect(progress.documents).toEqual({ total: 3, pending: 0, processing: 0, ready: 0, failed: 3 });
    for (const doc of created) {
      const got = await stack.api.get(`/pipelines/${pipelineId}/documents/${doc.id}`);
      expect(got.body).toMatchObject({ status: 'failed', error: expect.stringMatching(/embedding server/i) });
    }
    expect(
      await stack.rt
        .db('fragment_staging')
        .whereIn(
          'document_version_id',
          stack.rt.db('document_versions').where({ pipeline_id: pipelineId }).select('id'),
        )
        .count({ n: '*' }),
    ).toEqual([{ n: 0 }]);
  });

  it('GET of a batch: unknown, malformed, or of another pipeline → 404', async () => {
    const modelId = await createModel('batch-404');
    const pipelineId = await createPipeline('batch-404', modelId);
    const other = await createPipeline('batch-404-other', modelId);
    const { batchId } = await ingestBatch(pipelineId, [{ content: 'One.', classification: 'public' }]);
    expect((await stack.api.get(`/pipelines/${other}/document_batches/${batchId}`)).status).toBe(404);
    expect((await stack.api.get(`/pipelines/${pipelineId}/document_batches/nope`)).status).toBe(404);
    const unknown = await stack.api.get(`/pipelines/${pipelineId}/document_batches/${other}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain(other);
  });
});

describe('issue 15: the HNSW index around large loads', () => {
  let modelId: string;
  let pipelineId: string;
  let otherPipelineId: string;
  // Paragraphs of public documents (the even ones).
  const QUERIES = [3, 17, 222, 1444, 1888].map(paragraph);

  beforeAll(async () => {
    modelId = await createModel('bulk-index', { provider: 'hash', size: 32 });
    pipelineId = await createPipeline('bulk-index', modelId);
    otherPipelineId = await createPipeline('bulk-index-other', modelId);
    // The same texts in another pipeline of the same model, all internal: a search of the first
    // pipeline must never return them, nor internal fragments to a public reader.
    const corpus = (classification: (d: number) => string) =>
      Array.from({ length: 20 }, (_, d) => ({
        content: Array.from({ length: 100 }, (_, p) => paragraph(d * 100 + p)).join('\n\n'),
        classification: classification(d),
        metadata: { bucket: d },
      }));
    await ingestBatch(
      pipelineId,
      corpus((d) => (d % 2 ? 'internal' : 'public')),
    );
    await ingestBatch(
      otherPipelineId,
      corpus(() => 'internal'),
    );
  });

  it('a load of 2,000 fragments into an empty model defers its index, and the batch builds it after the load', async () => {
    await waitFor(async () => (await indexState(modelId)) === 'ready', {
      what: 'the index to be built',
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    const [version] = await stack.rt
      .db('document_versions')
      .where({ pipeline_id: pipelineId })
      .select('batch_id');
    const history = await stack.temporal.workflow
      .getHandle(`ingestion-batch-${version.batch_id}`)
      .fetchHistory();
    const scheduled = (history.events ?? []).flatMap(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    expect(scheduled).toContain('buildVectorIndex');
    const completed = (history.events ?? []).filter(
      (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    );
    expect(completed.length).toBeGreaterThan(0);
    const plan = await stack.rt.db.raw('SELECT indexdef FROM pg_indexes WHERE indexname = ?', [
      `fragments_hnsw_${modelId.replace(/-/g, '')}`,
    ]);
    expect(plan.rows[0].indexdef).toContain('ef_construction');
  });

  it('a search while the index is absent or being rebuilt returns the exact result, of its pipeline and classification only', async () => {
    await waitFor(async () => (await indexState(modelId)) === 'ready', {
      what: 'the index',
      timeoutMs: 30_000,
    });
    const model = (await stack.rt.embeddingModels.get(modelId))!;
    const ask = () =>
      Promise.all(
        QUERIES.flatMap((q) => [
          search(pipelineId, q, 'public'),
          search(pipelineId, q, 'internal', { bucket: { $lt: 4 } }),
        ]),
      );
    // Absent: exact scans.
    expect(await stack.rt.vectorIndexes.deferForLoad(modelId, 5000)).toBe(true);
    expect(await indexState(modelId)).toBe('absent');
    const exact = await ask();
    for (const [i, hits] of exact.entries()) {
      expect(hits).toHaveLength(5);
      if (i % 2 === 0) expect(hits.every((h) => h.classification === 'public')).toBe(true);
    }
    // Each query's own paragraph is its nearest fragment.
    expect(exact.filter((_, i) => i % 2 === 0).map((hits) => hits[0]!.page_content)).toEqual(QUERIES);
    const ours = new Set(
      (await stack.rt.db('fragments').where({ pipeline_id: pipelineId }).select('id')).map(
        (r) => r.id as string,
      ),
    );
    expect(exact.flat().every((h) => ours.has(h.id))).toBe(true);

    // Building: a transaction that wrote to `fragments` holds the concurrent build at its first wait.
    const blocker = new Client({ connectionString: stack.database.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE fragments IN ROW EXCLUSIVE MODE');
      const build = stack.rt.vectorIndexes.buildIfAbsent(model);
      await waitFor(async () => (await indexState(modelId)) === 'building', { what: 'the build to start' });
      const during = await ask();
      expect(during.map((hits) => hits.map((h) => h.id))).toEqual(exact.map((hits) => hits.map((h) => h.id)));
      // A second builder finds the first at work.
      await expect(stack.rt.vectorIndexes.buildIfAbsent(model)).resolves.toBe('busy');
      await blocker.query('COMMIT');
      await expect(build).resolves.toBe('built');
    } finally {
      await blocker.end();
    }
    expect(await indexState(modelId)).toBe('ready');
    const after = await ask();
    for (const [i, hits] of after.entries()) {
      expect(hits).toHaveLength(5);
      expect(hits.every((h) => ours.has(h.id))).toBe(true);
      if (i % 2 === 0) expect(hits.every((h) => h.classification === 'public')).toBe(true);
    }
    expect(after.filter((_, i) => i % 2 === 0).map((hits) => hits[0]!.page_content)).toEqual(QUERIES);
  });

  it('a small load into a set leaves the index in place; a large set is never dropped', async () => {
    expect(await stack.rt.vectorIndexes.deferForLoad(modelId, 999)).toBe(false);
    expect(await indexState(modelId)).toBe('ready');
    // 4,000 fragments of this model: still a small set (≤ 20,000): a large load may defer.
    const big = await createModel('bulk-index-big', { provider: 'hash', size: 8 });
    await stack.rt.db.raw(
      `INSERT INTO fragments (id, document_id, document_version_id, pipeline_id, embedding_model_id, classification,
         metadata, ordinal, version, text_cipher, embedding, current, created_at)
       SELECT gen_random_uuid(), v.document_id, v.id, v.pipeline_id, ?::uuid, 'public', '{}', 100000 + g, v.version,
         '\\x00', '[1,0,0,0,0,0,0,0]', false, now()
       FROM (SELECT * FROM document_versions WHERE pipeline_id = ? LIMIT 1) v, generate_series(1, 20001) g`,
      [big, pipelineId],
    );
    expect(await stack.rt.vectorIndexes.deferForLoad(big, 100_000)).toBe(false);
    expect(await indexState(big)).toBe('ready');
  });
});
