// SPEC §3–§6 through the API with a real worker: embedding models, text splitters, pipelines
// (CL-1, MD-1), durable ingestion (DOC-1..3) and search (SR-1..4, CL-2/CL-3).
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import pgvector from 'pgvector';
import { hashEmbedding } from '../../infra/hash-embedder';
import { documentSettled } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;
let fake: FakeModelServer;
let modelId: string;
let splitterId: string;

const HIERARCHY = [
  { name: 'internal', includes: ['public'] },
  { name: 'public' },
  { name: 'hr', includes: ['public'] },
];

interface Statement {
  sql: string;
  bindings: unknown[];
}

/** The SQL statements the in-process API sends through the runtime's knex while `fn` runs. */
async function statementsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; statements: Statement[] }> {
  const statements: Statement[] = [];
  const listener = (q: { sql: string; bindings?: unknown[] }) =>
    statements.push({ sql: q.sql, bindings: q.bindings ?? [] });
  stack.rt.db.on('query', listener);
  try {
    return { result: await fn(), statements };
  } finally {
    stack.rt.db.removeListener('query', listener);
  }
}

/** The one vector-search statement among `statements` (the `<=>` distance of SR-3). */
function vectorSearch(statements: Statement[]): Statement {
  const searches = statements.filter((s) => s.sql.includes('<=>'));
  expect(searches).toHaveLength(1);
  return searches[0]!;
}

/** CL-3: the classification predicate, with exactly the reader's levels, is in the statement. */
function expectClassificationPredicate(statement: Statement, levels: string[]): void {
  // knex reports the statement as sent to PostgreSQL: positional parameters $1, $2, ...
  const match = /"f"\."classification" in \((\$\d+(?:, \$\d+)*)\)/.exec(statement.sql);
  expect(match).not.toBeNull();
  const bound = match![1]!.split(', ').map((p) => statement.bindings[Number(p.slice(1)) - 1]);
  expect(bound.sort()).toEqual([...levels].sort());
}

/**
 * SR-1 by PostgreSQL itself, over the words: `ts_rank_cd` of `to_tsvector` of the decrypted texts
 * of the current fragments a reader of `levels` may see (the stored lexemes are keyed hashes).
 */
async function expectedTextRanks(pipelineId: string, levels: string[], query: string, limit: number) {
  const { text_search_config: config } = await stack.rt
    .db('pipelines')
    .where({ id: pipelineId })
    .first('text_search_config');
  const fragments = (await stack.rt
    .db('fragments')
    .where({ pipeline_id: pipelineId, current: true, expired_at: null })
    .whereIn('classification', levels)
    .select('id', 'text_cipher')) as { id: string; text_cipher: Buffer }[];
  const texts = fragments.map((f) => stack.rt.keyring.decrypt('content', f.text_cipher).toString('utf8'));
  const { rows } = await stack.rt.db.raw(
    `SELECT id, ts_rank_cd(to_tsvector(?::regconfig, t), websearch_to_tsquery(?::regconfig, ?)) AS rank
       FROM unnest(?::uuid[], ?::text[]) AS x(id, t)
      WHERE to_tsvector(?::regconfig, t) @@ websearch_to_tsquery(?::regconfig, ?)
      ORDER BY rank DESC, id LIMIT ?`,
    [config, config, query, fragments.map((f) => f.id), texts, config, config, query, limit],
  );
  return (rows as { id: string; rank: string }[]).map((r) => ({ id: r.id, score: Number(r.rank) }));
}

/** Exact cosine order (no index) of the same fragments for the hash embedding of `query`. */
async function expectedVectorOrder(pipelineId: string, levels: string[], query: string, limit: number) {
  return stack.rt.db.transaction(async (trx) => {
    await trx.raw('SET LOCAL enable_indexscan = off');
    const { rows } = await trx.raw(
      `SELECT id FROM fragments
        WHERE pipeline_id = ? AND current AND expired_at IS NULL AND classification = ANY(?)
        ORDER BY (embedding::vector(64)) <=> ?::vector(64), id LIMIT ?`,
      [pipelineId, levels, pgvector.toSql(hashEmbedding(query, 64)), limit],
    );
    return (rows as { id: string }[]).map((r) => r.id);
  });
}

async function createPipeline(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await stack.api.post('/pipelines', {
    name,
    embedding_model_id: modelId,
    text_splitter_id: splitterId,
    classifications: HIERARCHY,
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  const model = await stack.api.post('/embedding_models', { name: 'hash-64', provider: 'hash', size: 64 });
  expect(model.status).toBe(201);
  modelId = model.body.id;
  const splitter = await stack.api.post('/text_splitters', {
    name: 'small-chunks',
    provider: 'recursive_character',
    parameters: { chunk_size: 60, chunk_overlap: 0 },
  });
  expect(splitter.status).toBe(201);
  splitterId = splitter.body.id;
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) console.log(stack.logs.filter((l) => l.includes('"level":50')).join(''));
  await stack?.stop();
  await fake?.close();
});

describe('§3 embedding models and text splitters', () => {
  it('§3: providers are listed and defaults are materialised', async () => {
    expect((await stack.api.get('/embedding_providers')).body.data.map((p: any) => p.id)).toEqual([
      'hash',
      'openai',
    ]);
    expect((await stack.api.get('/text_splitter_providers')).body.data.map((p: any) => p.id)).toEqual([
      'recursive_character',
      'character',
    ]);
    const splitter = await stack.api.post('/text_splitters', {
      name: 'defaults',
      provider: 'recursive_character',
    });
    expect(splitter.body.parameters).toEqual({ chunk_size: 1000, chunk_overlap: 200 });
  });

  it('§3: size outside 1–2000, a bad overlap or unknown provider parameters → 400, nothing stored', async () => {
    for (const body of [
      { name: 'too-big', provider: 'hash', size: 2001 },
      { name: 'zero', provider: 'hash', size: 0 },
      { name: 'params', provider: 'hash', size: 8, parameters: { foo: 1 } },
      { name: 'no-endpoint', provider: 'openai', size: 8, parameters: { model: 'm', api_key: 'k' } },
    ]) {
      expect((await stack.api.post('/embedding_models', body)).status).toBe(400);
    }
    const overlap = await stack.api.post('/text_splitters', {
      name: 'bad',
      provider: 'character',
      parameters: { chunk_size: 10, chunk_overlap: 10 },
    });
    expect(overlap.status).toBe(400);
    expect(overlap.body.detail).toContain('chunk_overlap');
    expect((await stack.api.get('/embedding_models')).body.data.map((m: any) => m.name)).toEqual(['hash-64']);
  });

  it('issue 15: HNSW build parameters are set per model (defaults m 16, ef_construction 200) and build its index; out of range → 400 naming the field, nothing stored', async () => {
    const indexdef = async (id: string): Promise<string> =>
      (
        await stack.rt.db.raw('SELECT indexdef FROM pg_indexes WHERE indexname = ?', [
          `fragments_hnsw_${id.replace(/-/g, '')}`,
        ])
      ).rows[0]?.indexdef ?? '';
    expect((await stack.api.get(`/embedding_models/${modelId}`)).body.index).toEqual({
      m: 16,
      ef_construction: 200,
      state: 'ready',
    });
    expect(await indexdef(modelId)).toMatch(/WITH \(m='16', ef_construction='200'\)/);
    const tuned = await stack.api.post('/embedding_models', {
      name: 'tuned',
      provider: 'hash',
      size: 32,
      index: { m: 24, ef_construction: 100 },
    });
    expect(tuned.status).toBe(201);
    expect(tuned.body.index).toEqual({ m: 24, ef_construction: 100 });
    expect(await indexdef(tuned.body.id)).toMatch(/WITH \(m='24', ef_construction='100'\)/);
    // Either alone takes the other's default.
    const wide = await stack.api.post('/embedding_models', {
      name: 'wide',
      provider: 'hash',
      size: 32,
      index: { m: 48 },
    });
    expect(wide.body.index).toEqual({ m: 48, ef_construction: 200 });
    for (const [index, field] of [
      [{ m: 1 }, 'index.m'],
      [{ m: 101 }, 'index.m'],
      [{ ef_construction: 3 }, 'index.ef_construction'],
      [{ ef_construction: 1001 }, 'index.ef_construction'],
      [{ m: 50, ef_construction: 60 }, 'index.ef_construction'],
      [{ m: 'x' }, 'index.m'],
      [{ lists: 100 }, 'index.lists'],
    ] as const) {
      const res = await stack.api.post('/embedding_models', {
        name: 'bad-index',
        provider: 'hash',
        size: 8,
        index,
      });
      expect({ index, status: res.status }).toEqual({ index, status: 400 });
      expect(res.body.errors.map((e: any) => e.path)).toContain(field);
    }
    const names = (await stack.api.get('/embedding_models')).body.data.map((m: any) => m.name);
    expect(names).not.toContain('bad-index');
    for (const id of [tuned.body.id, wide.body.id])
      expect((await stack.api.delete(`/embedding_models/${id}`)).status).toBe(204);
  });

  it('§3: an openai model keeps its api_key encrypted and never returns it; an in-use model cannot be deleted (409)', async () => {
    const res = await stack.api.post('/embedding_models', {
      name: 'remote',
      provider: 'openai',
      size: 8,
      parameters: { endpoint: fake.url, model: 'embed-small', api_key: 'sk-embed-secret' },
    });
    expect(res.status).toBe(201);
    expect(JSON.stringify(res.body)).not.toContain('sk-embed-secret');
    expect(res.body.parameters).toEqual({
      endpoint: fake.url,
      model: 'embed-small',
      batch_size: 64,
      has_api_key: true,
    });
    await createPipeline('uses-hash');
    const busy = await stack.api.delete(`/embedding_models/${modelId}`);
    expect(busy.status).toBe(409);
    expect((await stack.api.delete(`/embedding_models/${res.body.id}`)).status).toBe(204);
  });
});

describe('§4 pipelines', () => {
  it('CL-1: a cycle or an undeclared include → 400; MD-1: $-keywords → 400', async () => {
    const cycle = await stack.api.post('/pipelines', {
      name: 'cyclic',
      embedding_model_id: modelId,
      text_splitter_id: splitterId,
      classifications: [
        { name: 'a', includes: ['b'] },
        { name: 'b', includes: ['a'] },
      ],
    });
    expect(cycle.status).toBe(400);
    expect(cycle.body.detail).toContain('cycle');
    const unknown = await stack.api.post('/pipelines', {
      name: 'unknown-include',
      embedding_model_id: modelId,
      text_splitter_id: splitterId,
      classifications: [{ name: 'a', includes: ['ghost'] }],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('ghost');
    const dollar = await stack.api.post('/pipelines', {
      name: 'dollar',
      embedding_model_id: modelId,
      text_splitter_id: splitterId,
      classifications: [{ name: 'a' }],
      metadata_schema: { type: 'object', properties: { x: { $ref: '#/definitions/y' } } },
    });
    expect(dollar.status).toBe(400);
    expect(dollar.body.detail).toContain('$ref');
    const missing = await stack.api.post('/pipelines', {
      name: 'missing-model',
      embedding_model_id: '01890a5d-ac96-774b-bcce-b302099a8057',
      text_splitter_id: splitterId,
      classifications: [{ name: 'a' }],
    });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toContain('embedding_model_id');
  });
});

describe('§5 documents and §6 search', () => {
  let pipelineId: string;

  beforeAll(async () => {
    pipelineId = await createPipeline('handbook', {
      metadata_schema: { type: 'object', properties: { year: { type: 'integer' } }, required: ['year'] },
    });
  });

  it('DOC-1: POST answers 202 pending, ingestion makes it ready with fragments; text is encrypted at rest', async () => {
    const content =
      'Holidays are planned in spring.\n\nThe cafeteria opens at eight.\n\nSalaries are paid monthly.';
    const res = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content,
      classification: 'public',
      metadata: { year: 2024, team: 'people' },
      external_id: 'handbook-1',
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'pending',
      expired_at: null,
      external_id: 'handbook-1',
      classification: 'public',
    });
    expect(typeof res.body.version).toBe('number');
    const ready = await documentSettled(stack.api, pipelineId, res.body.id);
    expect(ready.status).toBe('ready');
    const fragments = (await stack.api.get(`/pipelines/${pipelineId}/documents/${res.body.id}/fragments`))
      .body.data;
    expect(fragments.map((f: any) => f.page_content).join(' ')).toContain('cafeteria');
    const raw = await stack.rt.db('fragments').select('text_cipher');
    expect(raw.every((r: any) => !Buffer.from(r.text_cipher).toString('latin1').includes('cafeteria'))).toBe(
      true,
    );
  });

  it('SR-3/CL-2/CL-3: similarity search returns the closest current fragments the reader may see', async () => {
    const secret = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content: 'Salary bands for engineers are confidential.',
      classification: 'hr',
      metadata: { year: 2025 },
    });
    await documentSettled(stack.api, pipelineId, secret.body.id, { statuses: ['ready'] });
    const { result: asPublic, statements } = await statementsDuring(() =>
      stack.api.post(`/pipelines/${pipelineId}/search`, {
        query: 'salary bands',
        classification: 'public',
        k: 10,
      }),
    );
    expect(asPublic.status).toBe(200);
    expect(asPublic.body.data.length).toBeGreaterThan(0);
    expect(asPublic.body.data.every((f: any) => f.classification === 'public')).toBe(true);
    // CL-3: enforced by the statement that searches, not after it.
    expectClassificationPredicate(vectorSearch(statements), ['public']);
    const asHr = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'salary bands',
      classification: 'hr',
      k: 2,
    });
    expect(asHr.body.data[0].page_content).toContain('Salary bands');
    expect(asHr.body.data[0]).toMatchObject({
      order_id: 0,
      classification: 'hr',
      document_id: secret.body.id,
    });
    expect(asHr.body.data[0].score).toBeLessThan(asHr.body.data[1].score);
    const none = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'salary',
      classification: [],
    });
    expect(none.body.data).toEqual([]);
    const exactSearch = await statementsDuring(() =>
      stack.api.post(`/pipelines/${pipelineId}/search`, {
        query: 'salary',
        classification: { name: 'hr', exact: true },
        k: 10,
      }),
    );
    const exact = exactSearch.result;
    expect(exact.body.data.length).toBeGreaterThan(0);
    expect(exact.body.data.every((f: any) => f.classification === 'hr')).toBe(true);
    expectClassificationPredicate(vectorSearch(exactSearch.statements), ['hr']);
    const unknown = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'x',
      classification: 'secret',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('secret');
  });

  it('SR-1/FL: filters, threshold, full_text and hybrid', async () => {
    const filteredSearch = await statementsDuring(() =>
      stack.api.post(`/pipelines/${pipelineId}/search`, {
        query: 'salary',
        classification: ['internal', 'hr'],
        filters: { year: { $gte: 2025 } },
        k: 10,
      }),
    );
    const filtered = filteredSearch.result;
    expect(filtered.body.data.length).toBeGreaterThan(0);
    expect(filtered.body.data.every((f: any) => f.metadata.year >= 2025)).toBe(true);
    // The filter is a predicate of the searching statement too, with its value bound.
    const search = vectorSearch(filteredSearch.statements);
    expect(search.sql).toMatch(/metadata/);
    expect(search.bindings.map(String)).toContain('2025');
    expectClassificationPredicate(search, ['hr', 'internal', 'public']);
    const bad = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'x',
      classification: 'public',
      filters: { year: { $near: 1 } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('$near');
    const strict = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'cafeteria opens',
      classification: 'public',
      threshold: 0,
    });
    expect(strict.body.data).toEqual([]);
    const text = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'cafeteria',
      classification: 'public',
      search_type: 'full_text',
    });
    expect(text.body.data[0].page_content).toContain('cafeteria');
    expect(text.body.data[0].score).toBeGreaterThan(0);
    // SR-1: score = PostgreSQL's ts_rank_cd of websearch_to_tsquery, best first (k 5 by default).
    const idsAndScores = (data: any[]) => data.map((f) => ({ id: f.id, score: f.score }));
    expect(idsAndScores(text.body.data)).toEqual(
      await expectedTextRanks(pipelineId, ['public'], 'cafeteria', 5),
    );
    const several = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'cafeteria or salaries or holidays or parking',
      classification: 'public',
      search_type: 'full_text',
    });
    expect(several.body.data.length).toBeGreaterThan(1);
    expect(idsAndScores(several.body.data)).toEqual(
      await expectedTextRanks(pipelineId, ['public'], 'cafeteria or salaries or holidays or parking', 5),
    );
    // Over keyed lexemes, phrases (positions kept), negation and stop words rank as over the words;
    // `cafet:*` is no prefix query: websearch_to_tsquery reads it as the word `cafet`.
    for (const query of ['"cafeteria opens"', '"opens cafeteria"', 'cafeteria -salaries', 'cafet:*', 'the']) {
      const res = await stack.api.post(`/pipelines/${pipelineId}/search`, {
        query,
        classification: 'public',
        search_type: 'full_text',
      });
      expect({ query, hits: idsAndScores(res.body.data) }).toEqual({
        query,
        hits: await expectedTextRanks(pipelineId, ['public'], query, 5),
      });
    }
    const hybrid = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'cafeteria',
      classification: 'public',
      search_type: 'hybrid',
      k: 3,
    });
    expect(hybrid.body.data[0].page_content).toContain('cafeteria');
    // SR-1 hybrid: reciprocal-rank fusion, Σ 1/(60 + rank) over the similarity and full-text
    // lists (each 20 deep for k = 3), computed here from PostgreSQL's own orders.
    const fused = new Map<string, number>();
    const lists = [
      await expectedVectorOrder(pipelineId, ['public'], 'cafeteria', 20),
      (await expectedTextRanks(pipelineId, ['public'], 'cafeteria', 20)).map((r) => r.id),
    ];
    for (const list of lists) list.forEach((id, i) => fused.set(id, (fused.get(id) ?? 0) + 1 / (60 + i + 1)));
    const best = [...fused.values()].sort((a, b) => b - a).slice(0, 3);
    expect(fused.size).toBeGreaterThan(1);
    expect(hybrid.body.data).toHaveLength(Math.min(3, fused.size));
    hybrid.body.data.forEach((f: any, i: number) => {
      expect(f.score).toBeCloseTo(fused.get(f.id)!, 12);
      expect(f.score).toBeCloseTo(best[i]!, 12);
    });
    const mmr = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'salary',
      classification: 'internal',
      search_type: 'mmr',
      k: 2,
      fetch_k: 5,
    });
    expect(mmr.status).toBe(200);
    expect(mmr.body.data).toHaveLength(2);
    for (const body of [
      { k: 0 },
      { k: 101 },
      { lambda_mult: 1.5 },
      { fetch_k: -1 },
      { threshold: -1 },
      { search_type: 'fuzzy' },
    ]) {
      const res = await stack.api.post(`/pipelines/${pipelineId}/search`, {
        query: 'x',
        classification: 'public',
        ...body,
      });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
  });

  it('DOC-2: a new version under the same external_id replaces the old one when ready', async () => {
    const first = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content: 'Parking is free for bicycles.',
      classification: 'public',
      metadata: { year: 2023 },
      external_id: 'parking',
    });
    await documentSettled(stack.api, pipelineId, first.body.id, { statuses: ['ready'] });
    const second = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content: 'Parking costs two euros per day.',
      classification: 'public',
      metadata: { year: 2024 },
      external_id: 'parking',
    });
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.version).toBeGreaterThan(first.body.version);
    await documentSettled(stack.api, pipelineId, first.body.id, { statuses: ['ready'] });
    const versions = (await stack.api.get(`/pipelines/${pipelineId}/documents/${first.body.id}/versions`))
      .body.data;
    expect(versions).toHaveLength(2);
    expect(versions[0].expired_at).not.toBeNull();
    expect(versions[1].expired_at).toBeNull();
    const hits = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'parking',
      classification: 'public',
      k: 10,
    });
    const parking = hits.body.data.filter((f: any) => f.document_id === first.body.id);
    expect(parking.map((f: any) => f.page_content)).toEqual(['Parking costs two euros per day.']);
  });

  it('MD-1/§5: metadata failing the schema, an unknown classification or oversize content → 400/413, nothing stored', async () => {
    const before = await stack.rt.db('document_versions').count({ n: '*' });
    const noYear = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content: 'x',
      classification: 'public',
      metadata: {},
    });
    expect(noYear.status).toBe(400);
    expect(noYear.body.detail).toContain('year');
    const level = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content: 'x',
      classification: 'top-secret',
      metadata: { year: 1 },
    });
    expect(level.status).toBe(400);
    expect(level.body.detail).toContain('top-secret');
    const huge = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content: 'x'.repeat(13 * 1024 * 1024),
      classification: 'public',
      metadata: { year: 1 },
    });
    expect(huge.status).toBe(413);
    expect(await stack.rt.db('document_versions').count({ n: '*' })).toEqual(before);
  });

  it('§5: batch ingestion, list filters, and delete expires the document', async () => {
    const batch = await stack.api.post(`/pipelines/${pipelineId}/documents:batch`, {
      documents: [1, 2, 3].map((i) => ({
        content: `Batch document number ${i} about trains.`,
        classification: 'internal',
        metadata: { year: 2000 + i },
      })),
    });
    expect(batch.status).toBe(202);
    expect(batch.body.data).toHaveLength(3);
    for (const d of batch.body.data)
      await documentSettled(stack.api, pipelineId, d.id, { statuses: ['ready'] });
    const listed = await stack.api.get(
      `/pipelines/${pipelineId}/documents?classification=internal&status=ready`,
    );
    expect(listed.body.data.map((d: any) => d.id).sort()).toEqual(
      batch.body.data.map((d: any) => d.id).sort(),
    );
    const victim = batch.body.data[0].id;
    expect((await stack.api.delete(`/pipelines/${pipelineId}/documents/${victim}`)).status).toBe(204);
    expect((await stack.api.get(`/pipelines/${pipelineId}/documents/${victim}`)).status).toBe(404);
    const hits = await stack.api.post(`/pipelines/${pipelineId}/search`, {
      query: 'trains',
      classification: 'internal',
      k: 10,
    });
    expect(hits.body.data.some((f: any) => f.document_id === victim)).toBe(false);
  });
});

describe('§1 document lists', () => {
  it('§1: documents of one batch (same created_at) page one by one, each exactly once, both ways', async () => {
    const pipelineId = await createPipeline('paging');
    const batch = await stack.api.post(`/pipelines/${pipelineId}/documents:batch`, {
      documents: [1, 2, 3, 4].map((i) => ({ content: `Paging document ${i}.`, classification: 'public' })),
    });
    expect(batch.status).toBe(202);
    const expected = batch.body.data.map((d: any) => d.id).sort();
    const forward: string[] = [];
    let page = await stack.api.get(`/pipelines/${pipelineId}/documents?limit=1`);
    for (;;) {
      forward.push(...page.body.data.map((d: any) => d.id));
      if (!page.body.page_info.has_next) break;
      page = await stack.api.get(
        `/pipelines/${pipelineId}/documents?limit=1&after=${page.body.page_info.after}`,
      );
    }
    expect([...forward].sort()).toEqual(expected);
    const backward: string[] = [];
    for (;;) {
      backward.unshift(...page.body.data.map((d: any) => d.id));
      if (!page.body.page_info.has_prev) break;
      page = await stack.api.get(
        `/pipelines/${pipelineId}/documents?limit=1&before=${page.body.page_info.before}`,
      );
    }
    expect(backward).toEqual(forward);
  });
});

describe('§16 OpenAPI of the knowledge endpoints', () => {
  it('§16: /openapi.json lists the knowledge paths with their parameters and request schemas', async () => {
    const doc = (await stack.api.get('/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/embedding_models',
        '/text_splitters',
        '/pipelines/{id}',
        '/pipelines/{id}/documents',
        '/pipelines/{id}/documents:batch',
        '/pipelines/{id}/documents/{docId}/versions',
        '/pipelines/{id}/search',
      ]),
    );
    const batch = doc.paths['/pipelines/{id}/documents:batch'].post;
    expect(batch.parameters.map((p: any) => p.name)).toEqual(['id']);
    expect(
      doc.paths['/pipelines/{id}/search'].post.requestBody.content['application/json'].schema.required,
    ).toEqual(['query', 'classification']);
  });
});
