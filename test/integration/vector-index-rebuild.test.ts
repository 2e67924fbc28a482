// Issue 26 item 5: an existing model's HNSW index is rebuilt when `index.m` /
// `index.ef_construction` change (PATCH) or a rebuild is asked for, beside the old one, while
// searches stay exact and confined to their pipeline and classification; the periodic sweep builds
// an index that a terminated import left absent.
import { Client } from 'pg';
import { hashEmbedding } from '../../infra/hash-embedder';
import { vectorParameter } from '../../db/sql-helpers';
import { startStack, type Stack } from '../helpers/stack';
import { until, waitFor } from '../helpers/wait';

let stack: Stack;
let modelId: string;
let pipelineId: string;
let otherPipelineId: string;

const SIZE = 32;
const WORDS = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'jade'];
const paragraph = (n: number): string =>
  Array.from({ length: 6 }, (_, i) => WORDS[Math.floor(n / 10 ** i) % 10]).join(' ') + ` p${n}.`;
const QUERIES = [3, 17, 222, 1444, 1888].map(paragraph);
const FILTER = { bucket: { $lt: 4 } };

const indexName = (id: string) => `fragments_hnsw_${id.replace(/-/g, '')}`;

async function indexDefinitions(id: string): Promise<Record<string, string>> {
  const { rows } = await stack.rt.db.raw(
    'SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE ?',
    [`${indexName(id)}%`],
  );
  return Object.fromEntries(
    (rows as { indexname: string; indexdef: string }[]).map((r) => [r.indexname, r.indexdef]),
  );
}

const indexState = async (id: string): Promise<string> =>
  (await stack.api.get(`/embedding_models/${id}`)).body.index.state as string;

async function ingest(pipeline: string, classification: (d: number) => string): Promise<void> {
  const documents = Array.from({ length: 20 }, (_, d) => ({
    content: Array.from({ length: 100 }, (_, p) => paragraph(d * 100 + p)).join('\n\n'),
    classification: classification(d),
    metadata: { bucket: d },
  }));
  const res = await stack.api.post(`/pipelines/${pipeline}/documents:batch`, { documents });
  expect(res.status).toBe(202);
  await until(
    async () =>
      (await stack.api.get(res.headers.get('location')!)).body.status === 'done' ? true : undefined,
    { what: 'the batch', timeoutMs: 60_000, intervalMs: 100 },
  );
}

interface Hit {
  id: string;
  classification: string;
  score: number;
  metadata: { bucket: number };
}

/** Public readers unfiltered, internal readers with FILTER: one search per query each. */
const ask = (): Promise<Hit[][]> =>
  Promise.all(
    QUERIES.flatMap((query, i) =>
      [
        { query, classification: 'public', k: 5 },
        { query, classification: 'internal', k: 5, filters: FILTER },
      ].map(async (body) => {
        const res = await stack.api.post(`/pipelines/${pipelineId}/search`, body);
        expect([i, res.status]).toEqual([i, 200]);
        return res.body.data as Hit[];
      }),
    ),
  );

/** The exact answers by a sequential scan: the five smallest distances of each search, in order. */
async function exactDistances(): Promise<number[][]> {
  const conn = new Client({ connectionString: stack.database.url });
  await conn.connect();
  try {
    await conn.query('SET enable_indexscan = off; SET enable_bitmapscan = off');
    const out: number[][] = [];
    for (const query of QUERIES)
      for (const [levels, filtered] of [
        [['public'], false],
        [['internal', 'public'], true],
      ] as const) {
        const { rows } = await conn.query(
          `SELECT (embedding::vector(${SIZE})) <=> $1::vector(${SIZE}) AS d FROM fragments
           WHERE pipeline_id = $2 AND embedding_model_id = $3 AND current AND expired_at IS NULL
             AND classification = ANY($4) ${filtered ? "AND (metadata->>'bucket')::int < 4" : ''}
           ORDER BY d LIMIT 5`,
          [vectorParameter(hashEmbedding(query, SIZE)), pipelineId, modelId, levels],
        );
        out.push(rows.map((r: { d: number }) => Number(r.d)));
      }
    return out;
  } finally {
    await conn.end();
  }
}

/** Each search's hits: the exact distances, and only its pipeline's rows its reader may see. */
async function expectExact(results: Hit[][], exact: number[][], ours: Set<string>): Promise<void> {
  expect(results.map((hits) => hits.map((h) => Number(h.score.toFixed(6))))).toEqual(
    exact.map((ds) => ds.map((d) => Number(d.toFixed(6)))),
  );
  for (const [i, hits] of results.entries()) {
    expect(hits.every((h) => ours.has(h.id))).toBe(true);
    if (i % 2 === 0) expect(hits.every((h) => h.classification === 'public')).toBe(true);
    else expect(hits.every((h) => h.metadata.bucket < 4)).toBe(true);
  }
}

beforeAll(async () => {
  stack = await startStack({ env: { AGENTRY_CONTENT_SWEEP_SECONDS: '3600' } });
  const splitter = await stack.api.post('/text_splitters', {
    name: 'paragraphs',
    provider: 'character',
    parameters: { separator: '\n\n', chunk_size: 60, chunk_overlap: 0 },
  });
  const model = await stack.api.post('/embedding_models', {
    name: 'rebuilt',
    provider: 'hash',
    size: SIZE,
    index: { m: 8, ef_construction: 32 },
  });
  expect(model.status).toBe(201);
  modelId = model.body.id;
  const pipeline = (name: string) =>
    stack.api.post('/pipelines', {
      name,
      embedding_model_id: modelId,
      text_splitter_id: splitter.body.id,
      classifications: [{ name: 'internal', includes: ['public'] }, { name: 'public' }],
    });
  pipelineId = (await pipeline('rebuilt')).body.id;
  otherPipelineId = (await pipeline('rebuilt-other')).body.id;
  // The same texts in another pipeline of the same model, all internal: never found by a search
  // of the first pipeline.
  await ingest(pipelineId, (d) => (d % 2 ? 'internal' : 'public'));
  await ingest(otherPipelineId, () => 'internal');
  await waitFor(async () => (await indexState(modelId)) === 'ready', {
    what: 'the index',
    timeoutMs: 60_000,
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe("issue 26: rebuilding an existing model's index", () => {
  it('PATCH refuses what may not change and ef_construction below 2·m, naming them', async () => {
    for (const [body, field] of [
      [{ size: 64 }, 'size'],
      [{ provider: 'openai' }, 'provider'],
      [{ index: { m: 24 } }, 'index.ef_construction'],
      [{ index: { m: 1 } }, 'm'],
    ] as const) {
      const res = await stack.api.patch(`/embedding_models/${modelId}`, body);
      expect([field, res.status]).toEqual([field, 400]);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    const missing = await stack.api.post(
      '/embedding_models/6f0c1c2e-8d7a-4c1b-9a55-0b6a2c1d9e01/index:rebuild',
      {},
    );
    expect(missing.status).toBe(404);
    expect(await indexDefinitions(modelId)).toEqual({
      [indexName(modelId)]: expect.stringContaining("m='8', ef_construction='32'"),
    });
  });

  it('new index parameters are rebuilt beside the old index: searches meanwhile return the exact result of their pipeline and classification only, and the new parameters reach pg_indexes', async () => {
    const ours = new Set(
      (await stack.rt.db('fragments').where({ pipeline_id: pipelineId }).select('id')).map(
        (r) => r.id as string,
      ),
    );
    const exact = await exactDistances();
    await expectExact(await ask(), exact, ours);

    // A transaction that wrote to `fragments` holds the concurrent build at its first wait.
    const blocker = new Client({ connectionString: stack.database.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE fragments IN ROW EXCLUSIVE MODE');
      const patched = await stack.api.patch(`/embedding_models/${modelId}`, {
        description: 'denser graph',
        index: { m: 12, ef_construction: 48 },
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({
        description: 'denser graph',
        index: { m: 12, ef_construction: 48 },
      });
      await waitFor(async () => (await indexState(modelId)) === 'rebuilding', {
        what: 'the rebuild to start',
        timeoutMs: 30_000,
      });
      expect(Object.keys(await indexDefinitions(modelId)).sort()).toEqual([
        indexName(modelId),
        `${indexName(modelId)}_next`,
      ]);
      await expectExact(await ask(), exact, ours);
      await blocker.query('COMMIT');
    } finally {
      await blocker.end();
    }
    await waitFor(async () => (await indexState(modelId)) === 'ready', {
      what: 'the swap',
      timeoutMs: 60_000,
    });
    const definitions = await indexDefinitions(modelId);
    expect(definitions).toEqual({
      [indexName(modelId)]: expect.stringContaining("m='12', ef_construction='48'"),
    });
    expect(definitions[indexName(modelId)]).toContain(`WHERE (embedding_model_id = '${modelId}'::uuid)`);
    await expectExact(await ask(), exact, ours);
  });

  it('a requested rebuild builds a new index with the same parameters', async () => {
    // By name in pg_class: between the old index's drop and the rename, no index has the name.
    const oid = async () =>
      ((await stack.rt.db.raw('SELECT oid FROM pg_class WHERE relname = ?', [indexName(modelId)])).rows[0]
        ?.oid ?? null) as number | null;
    const before = await oid();
    const res = await stack.api.post(`/embedding_models/${modelId}/index:rebuild`, {});
    expect(res.status).toBe(202);
    expect(res.body.index).toMatchObject({ m: 12, ef_construction: 48 });
    await waitFor(async () => (await oid()) !== before && (await indexState(modelId)) === 'ready', {
      what: 'the rebuilt index',
      timeoutMs: 60_000,
    });
    expect(await indexDefinitions(modelId)).toEqual({
      [indexName(modelId)]: expect.stringContaining("m='12', ef_construction='48'"),
    });
  });

  it('the periodic sweep builds an index that a terminated import left absent', async () => {
    // An import that deferred the index and was terminated before its last batch built it.
    const res = await stack.api.post(`/pipelines/${pipelineId}/documents:batch`, {
      documents: [{ content: paragraph(9999), classification: 'public', metadata: { bucket: 99 } }],
    });
    expect(res.status).toBe(202);
    await stack.temporal.workflow
      .getHandle(`ingestion-batch-${res.body.batch_id as string}`)
      .terminate('test: an import cut short')
      .catch(() => undefined);
    await stack.rt
      .db('document_versions')
      .where({ batch_id: res.body.batch_id })
      .update({ status: 'processing' });
    expect(await stack.rt.vectorIndexes.deferForLoad(modelId, 5000)).toBe(true);
    expect(await indexState(modelId)).toBe('absent');
    // An import whose documents changed in the last 2 minutes may still be loading: nothing is built.
    const early = await stack.temporal.workflow.execute('contentRetention', {
      taskQueue: stack.env.config.taskQueue,
      workflowId: `test-sweep-0-${modelId}`,
    });
    expect(early).toEqual({ deleted: expect.any(Number) });
    expect(await indexState(modelId)).toBe('absent');
    // Still for 10 minutes, its workflow gone: the sweep builds the index.
    await stack.rt.db('document_versions').update({ updated_at: new Date(Date.now() - 600_000) });

    const sweep = await stack.temporal.workflow.execute('contentRetention', {
      taskQueue: stack.env.config.taskQueue,
      workflowId: `test-sweep-${modelId}`,
    });
    expect(sweep).toMatchObject({ indexes: 1 });
    await waitFor(async () => (await indexState(modelId)) === 'ready', {
      what: 'the index',
      timeoutMs: 60_000,
    });
    expect(await indexDefinitions(modelId)).toEqual({
      [indexName(modelId)]: expect.stringContaining("m='12', ef_construction='48'"),
    });
    // With the index in order, the next sweep starts nothing.
    const next = await stack.temporal.workflow.execute('contentRetention', {
      taskQueue: stack.env.config.taskQueue,
      workflowId: `test-sweep-2-${modelId}`,
    });
    expect(next).toEqual({ deleted: expect.any(Number) });
  });
});
