// `npm run bench -- retrieval` (DESIGN §6): ingest synthetic clustered documents through the API
// up to BENCH_FRAGMENTS fragments (default 100k; 384 dims, `hash` embedder, 1 KB chunks), then
// k=5 similarity searches with a classification and a 5 % metadata filter. Reports ingestion
// fragments/s (until the deferred HNSW index is built again), 2,000 one-fragment documents in one
// batch request, search p50/p95 through HTTP (with the same search straight on the store and as one
// SQL statement as baselines) and recall@5 against an exact scan per ef_search (the trade-off).
// The API and the worker run in this process (bench/harness.ts) on a fresh database.
import type { Knex } from 'knex';
import { Client as PgClient } from 'pg';
import { resolveReader } from '../domain/classifications';
import { compileFilter } from '../domain/filter-compiler';
import { parseFilter } from '../domain/filter-parser';
import { vectorParameter } from '../db/sql-helpers';
import { FragmentStore, type SearchScope } from '../db/fragment-store';
import { hashEmbedding } from '../infra/hash-embedder';
import { cpuBetween, cpuSnapshot } from './lib/cpu';
import { envInt, log } from './lib/env';
import { startBenchStack, type BenchStack } from './lib/harness';
import {
  elapsedMs,
  figuresJson,
  machine,
  percentile,
  printTable,
  round,
  writeResults,
  type Figure,
} from './lib/report';
import { Corpus } from './lib/synthetic';

const DIMS = 384;
const K = 5;
const FILTER = { bucket: { $lt: 5 } };
/** An equality filter (1 % of the rows, 0.5 % for public): the metadata's GIN index finds its rows. */
const equalityFilter = (i: number) => ({ bucket: i % 100 });
const CLASSIFICATIONS = [{ name: 'internal', includes: ['public'] }, { name: 'public' }];
const READERS = ['internal', 'public'] as const;

const settings = {
  fragments: envInt('BENCH_FRAGMENTS', 100_000),
  queries: envInt('BENCH_QUERIES', 200),
  warmup: envInt('BENCH_WARMUP', 20, 0),
  batchDocuments: envInt('BENCH_BATCH_DOCS', 50),
  /** Batch POSTs in flight at once. */
  postConcurrency: envInt('BENCH_POST_CONCURRENCY', 2),
  seed: envInt('BENCH_SEED', 42, 0),
  /** Queries also answered by a full exact scan of `fragments` (slow at 100k: ~0.5 s each). */
  fullExactQueries: envInt('BENCH_FULL_EXACT_QUERIES', 10, 0),
  /** Queries whose recall is also measured without classification and filter. */
  unfilteredRecallQueries: envInt('BENCH_UNFILTERED_RECALL_QUERIES', 50, 0),
  /** Give up when no document became ready for this long. */
  stallSeconds: envInt('BENCH_STALL_SECONDS', 120),
  /** `index.ef_construction` of the benchmark's model (0: the product's default). */
  efConstruction: envInt('BENCH_EF_CONSTRUCTION', 0, 0),
  /** One-fragment documents sent in one batch request (issue 15: ready in ≤ 3 s). */
  smallDocuments: envInt('BENCH_SMALL_DOCUMENTS', 2000),
  topics: 200,
  /** Paragraphs (= fragments) per document: 24–57 paragraphs of 750–999 characters ≈ 20–50 KB. */
  minParagraphs: 24,
  maxParagraphs: 57,
};

const newCorpus = () =>
  new Corpus({ seed: settings.seed, topics: settings.topics, wordsPerTopic: 100, commonWords: 500 });

interface Summary {
  p50: number;
  p95: number;
  mean: number;
  max: number;
}

const summarise = (samples: number[]): Summary => ({
  p50: round(percentile(samples, 50)),
  p95: round(percentile(samples, 95)),
  mean: round(samples.reduce((a, b) => a + b, 0) / samples.length),
  max: round(Math.max(...samples)),
});

// ---- setup through the API ----------------------------------------------------------------

/** A pipeline named `name` with an embedding model and a splitter of its own. */
async function createPipeline(
  stack: BenchStack,
  name: string,
  index?: { ef_construction: number },
): Promise<{ pipelineId: string; modelId: string }> {
  const model = await stack.http.expect<{ id: string }>(201, 'POST', '/embedding_models', {
    name,
    provider: 'hash',
    size: DIMS,
    ...(index ? { index } : {}),
  });
  const splitter = await stack.http.expect<{ id: string }>(201, 'POST', '/text_splitters', {
    name,
    provider: 'recursive_character',
    parameters: { chunk_size: 1000, chunk_overlap: 0 },
  });
  const pipeline = await stack.http.expect<{ id: string }>(201, 'POST', '/pipelines', {
    name,
    embedding_model_id: model.id,
    text_splitter_id: splitter.id,
    classifications: CLASSIFICATIONS,
  });
  return { pipelineId: pipeline.id, modelId: model.id };
}

// ---- ingestion ------------------------------------------------------------------------------

/** Request bodies of every batch, generated before the clock starts. */
function generateBatches(corpus: Corpus): { bodies: string[]; documents: number; fragments: number } {
  const bodies: string[] = [];
  let batch: unknown[] = [];
  let fragments = 0;
  let documents = 0;
  while (fragments < settings.fragments) {
    const paragraphs = Math.min(
      corpus.rng.int(settings.minParagraphs, settings.maxParagraphs),
      settings.fragments - fragments,
    );
    const doc = corpus.document(paragraphs);
    batch.push({
      content: doc.content,
      classification: documents % 2 === 0 ? 'internal' : 'public',
      metadata: { topic: doc.topic, bucket: corpus.rng.int(0, 99) },
      external_id: `bench-${documents}`,
    });
    fragments += paragraphs;
    documents += 1;
    if (batch.length === settings.batchDocuments) {
      bodies.push(JSON.stringify({ documents: batch }));
      batch = [];
    }
  }
  if (batch.length > 0) bodies.push(JSON.stringify({ documents: batch }));
  return { bodies, documents, fragments };
}

async function activitySeconds(stack: BenchStack): Promise<Record<string, { count: number; sum_s: number }>> {
  const metric = stack.worker.metrics.getSingleMetric('agentry_activity_duration_seconds');
  const out: Record<string, { count: number; sum_s: number }> = {};
  if (!metric) return out;
  for (const v of (await metric.get()).values) {
    const name = String(v.labels.activity);
    const entry = (out[name] ??= { count: 0, sum_s: 0 });
    const metricName = (v as { metricName?: string }).metricName ?? '';
    if (metricName.endsWith('_sum')) entry.sum_s = round(entry.sum_s + v.value, 2);
    if (metricName.endsWith('_count')) entry.count += v.value;
  }
  return out;
}

async function ingest(stack: BenchStack, pipelineId: string, modelId: string) {
  const corpus = newCorpus();
  const generated = generateBatches(corpus);
  const bytes = generated.bodies.reduce((n, b) => n + b.length, 0);
  log(
    `ingesting ${generated.fragments} fragments in ${generated.documents} documents ` +
      `(${round(bytes / 2 ** 20, 1)} MB, ${generated.bodies.length} batches of ≤ ${settings.batchDocuments})`,
  );
  const { rt } = stack;
  const progress = async (): Promise<Record<string, number>> => {
    const rows = (await rt
      .db('document_versions')
      .where({ pipeline_id: pipelineId })
      .groupBy('status')
      .select('status', rt.db.raw('count(*)::int AS n'))) as { status: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };

  const cpuBefore = cpuSnapshot();
  const start = process.hrtime.bigint();
  let postsDoneMs = 0;
  const queue = [...generated.bodies];
  const poster = async (): Promise<void> => {
    for (let body = queue.shift(); body !== undefined; body = queue.shift()) {
      const res = await fetch(`${stack.http.baseUrl}/pipelines/${pipelineId}/documents:batch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': stack.config.adminKeyId!,
          'x-api-key-secret': stack.config.adminKeySecret!,
        },
        body,
      });
      if (res.status !== 202) throw new Error(`batch POST → ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  const posting = Promise.all(Array.from({ length: settings.postConcurrency }, poster)).then(() => {
    postsDoneMs = elapsedMs(start);
  });

  // Done when the API lists no pending or processing document (the client's view).
  const unfinished = `/pipelines/${pipelineId}/documents?status$in=pending,processing&limit=1`;
  let lastReport = 0;
  let lastReady = -1;
  let lastChange = elapsedMs(start);
  let postError: unknown;
  posting.catch((err: unknown) => (postError = err));
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    if (postError) throw postError;
    if (interrupted) throw new Error('interrupted');
    if (postsDoneMs > 0) {
      const page = await stack.http.expect<{ data: unknown[] }>(200, 'GET', unfinished);
      if (page.data.length === 0) break;
    }
    if (elapsedMs(start) - lastReport > 10_000) {
      lastReport = elapsedMs(start);
      const statuses = await progress();
      log(`  ${round(lastReport / 1000, 0)} s: ${JSON.stringify(statuses)}`);
      if ((statuses.ready ?? 0) !== lastReady) {
        lastReady = statuses.ready ?? 0;
        lastChange = lastReport;
      } else if (lastReport - lastChange > settings.stallSeconds * 1000) {
        throw new Error(
          `no document became ready for ${settings.stallSeconds} s: ${JSON.stringify(statuses)}`,
        );
      }
    }
  }
  await posting;
  const loadedMs = elapsedMs(start);
  // The import is done when searches use the index again: the last batch builds it (deferred).
  await indexReady(stack, modelId);
  const wallMs = elapsedMs(start);
  const cpu = cpuBetween(cpuBefore, cpuSnapshot());
  const statuses = await progress();
  if ((statuses.failed ?? 0) > 0) throw new Error(`${statuses.failed} documents failed to ingest`);
  const [{ n: fragments }] = (await rt
    .db('fragments')
    .where({ pipeline_id: pipelineId, current: true })
    .whereNull('expired_at')
    .count('* as n')) as unknown as [{ n: number }];
  if (fragments !== generated.fragments)
    log(`WARNING: ${fragments} current fragments, expected ${generated.fragments}`);
  return {
    documents: generated.documents,
    fragments: Number(fragments),
    megabytes: round(bytes / 2 ** 20, 1),
    wall_s: round(wallMs / 1000, 2),
    posts_s: round(postsDoneMs / 1000, 2),
    /** Every document ready; then the deferred index is built until wall_s. */
    documents_ready_s: round(loadedMs / 1000, 2),
    index_build_s: round((wallMs - loadedMs) / 1000, 2),
    fragments_per_s: round(Number(fragments) / (wallMs / 1000), 0),
    documents_per_s: round(generated.documents / (wallMs / 1000), 1),
    /** CPU seconds per component during ingestion (the machine has os.cpus().length cores). */
    cpu,
    activity_seconds: await activitySeconds(stack),
  };
}

/** Waits until the model's HNSW index is valid (GET /embedding_models/{id}: index.state). */
async function indexReady(stack: BenchStack, modelId: string): Promise<void> {
  for (;;) {
    const model = await stack.http.expect<{ index: { state: string } }>(
      200,
      'GET',
      `/embedding_models/${modelId}`,
    );
    if (model.index.state === 'ready') return;
    if (interrupted) throw new Error('interrupted');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Issue 15: 2,000 one-fragment documents in one batch request into a pipeline of their own (a
 * model of their own): from the POST until every document is ready, and until the index is.
 */
async function smallDocuments(stack: BenchStack) {
  const { pipelineId, modelId } = await createPipeline(stack, 'bench-small-docs');
  const corpus = newCorpus().reseed(settings.seed + 2);
  const documents = Array.from({ length: settings.smallDocuments }, (_, i) => ({
    content: corpus.paragraph(i % settings.topics),
    classification: i % 2 === 0 ? 'internal' : 'public',
    metadata: { bucket: i % 100 },
  }));
  const start = process.hrtime.bigint();
  const posted = await stack.http.expect<{ batch_id: string }>(
    202,
    'POST',
    `/pipelines/${pipelineId}/documents:batch`,
    { documents },
  );
  const postMs = elapsedMs(start);
  let progress: { status: string; documents: Record<string, number> };
  for (;;) {
    progress = await stack.http.expect(
      200,
      'GET',
      `/pipelines/${pipelineId}/document_batches/${posted.batch_id}`,
    );
    if (progress.status === 'done') break;
    if (interrupted) throw new Error('interrupted');
    await new Promise((r) => setTimeout(r, 50));
  }
  const readyMs = elapsedMs(start);
  await indexReady(stack, modelId);
  const indexedMs = elapsedMs(start);
  if (progress.documents.failed! > 0) throw new Error(`${progress.documents.failed} small documents failed`);
  return {
    documents: settings.smallDocuments,
    post_s: round(postMs / 1000, 2),
    ready_s: round(readyMs / 1000, 2),
    index_ready_s: round(indexedMs / 1000, 2),
  };
}

// ---- search ---------------------------------------------------------------------------------

interface Query {
  text: string;
  classification: (typeof READERS)[number];
  vector: number[];
}

async function search(stack: BenchStack, pipelineId: string, modelId: string) {
  const { rt } = stack;
  const efs = [...new Set([40, 100, 200, stack.config.efSearch])].sort((a, b) => a - b);
  // Timed methods: each gets queries of its own (a query another method ran would find its pages
  // cached), taken in turn so that whatever else the machine does weighs on all of them alike.
  const methods = ['http', 'http-eq', ...efs.map((ef) => `store:${ef}`), 'sql'];
  // Same vocabularies as the documents (same seed); the queries come from a stream of their own.
  const corpus = newCorpus().reseed(settings.seed + 1);
  const queries: Query[] = Array.from(
    { length: (settings.warmup + settings.queries) * methods.length },
    (_, i) => {
      const { text } = corpus.query();
      // Readers alternate per round, so every method sees both.
      const reader = READERS[Math.floor(i / methods.length) % 2]!;
      return { text, classification: reader, vector: hashEmbedding(text, DIMS) };
    },
  );
  const pipeline = (await rt.pipelines.get(pipelineId))!;
  const filter = compileFilter(parseFilter(FILTER), 'f.metadata');
  const scopeOf = (q: Query): SearchScope => ({
    pipelineId,
    embeddingModelId: modelId,
    size: DIMS,
    classifications: resolveReader(q.classification, pipeline.closure),
    filter,
  });
  const storeAt = (ef: number) => new FragmentStore(rt.db, rt.documents, ef);
  const stores = new Map(efs.map((ef) => [ef, storeAt(ef)]));

  // The vector statement the store sends, per reader (captured once): the `sql` method replays it
  // with its own query vector (the one Buffer binding) on a dedicated connection whose session
  // has the settings: one round trip, the floor of the store call (BEGIN, settings, query, COMMIT).
  type Statement = { sql: string; bindings: unknown[] };
  const templates = new Map<string, Statement>();
  for (const reader of READERS) {
    let captured: Statement | undefined;
    const capture = (q: { sql: string; bindings?: unknown[] }): void => {
      if (q.sql.includes('<=>')) captured = { sql: q.sql, bindings: q.bindings ?? [] };
    };
    rt.db.on('query', capture);
    try {
      await stores
        .get(stack.config.efSearch)!
        .nearest(scopeOf({ ...queries[0]!, classification: reader }), queries[0]!.vector, K);
    } finally {
      rt.db.off('query', capture);
    }
    if (!captured || captured.bindings.filter((b) => Buffer.isBuffer(b)).length !== 1)
      throw new Error('could not capture the vector statement of the store');
    templates.set(reader, captured);
  }
  const pg = new PgClient({ connectionString: stack.config.databaseUrl });
  await pg.connect();
  await pg.query(`SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = ${stack.config.efSearch}`);
  const statementFor = (q: Query): Statement => {
    const t = templates.get(q.classification)!;
    return {
      sql: t.sql,
      bindings: t.bindings.map((b) => (Buffer.isBuffer(b) ? vectorParameter(q.vector) : b)),
    };
  };

  const samples: Record<string, number[]> = Object.fromEntries(methods.map((m) => [m, []]));
  let short = 0;
  let plan: string[] = [];
  try {
    for (const [i, q] of queries.entries()) {
      const method = methods[i % methods.length]!;
      const measuredRound = Math.floor(i / methods.length) >= settings.warmup;
      const t = process.hrtime.bigint();
      let returned: number;
      if (method === 'http' || method === 'http-eq') {
        // Through HTTP with authentication, as a client (the server's ef_search).
        const body = await stack.http.expect<{ data: unknown[] }>(
          200,
          'POST',
          `/pipelines/${pipelineId}/search`,
          {
            query: q.text,
            classification: q.classification,
            filters: method === 'http' ? FILTER : equalityFilter(i),
            k: K,
          },
        );
        returned = body.data.length;
      } else if (method === 'sql') {
        const st = statementFor(q);
        returned = (await pg.query(st.sql, st.bindings)).rows.length;
      } else {
        // The store call the route makes: no HTTP, auth, pipeline and model lookups, embedding.
        const ef = Number(method.split(':')[1]);
        returned = (await stores.get(ef)!.nearest(scopeOf(q), q.vector, K)).length;
      }
      const ms = elapsedMs(t);
      if (measuredRound) {
        samples[method]!.push(ms);
        // A bucket may hold no document of a reader's classification: the equality search may be short.
        if (returned < K && method !== 'http-eq') short += 1;
      }
    }
    const st = statementFor(queries[queries.length - 1]!);
    const res = await pg.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${st.sql}`,
      st.bindings,
    );
    plan = res.rows.map((r) => r['QUERY PLAN'].replace(/'\[[^\]]*\]'/g, "'[…]'"));
  } finally {
    await pg.end();
  }

  // Answers of the store at ef_search 40, 100 and the configured one for the recall queries (untimed).
  const measured = queries
    .filter((_, i) => Math.floor(i / methods.length) >= settings.warmup)
    .slice(0, settings.queries);
  const found: Record<number, { id: string; distance: number }[][]> = Object.fromEntries(
    efs.map((ef) => [ef, []]),
  );
  for (const ef of efs) {
    for (const q of measured) {
      const hits = await stores.get(ef)!.nearest(scopeOf(q), q.vector, K);
      found[ef]!.push(hits.map((h) => ({ id: h.id, distance: h.distance })));
    }
  }

  // 4. recall@5 of the store's answers in 2 against exact k-NN under the same predicates: the rows
  // they keep for the widest reader are copied once into a scratch table, which each query scans
  // exactly. The first queries also run as a full exact scan of `fragments` (index scans off): a
  // check that both agree, and what a search costs without HNSW.
  const scoped = (qb: Knex.QueryBuilder, classifications: string[]) =>
    qb
      .where('f.pipeline_id', pipelineId)
      .where('f.embedding_model_id', modelId)
      .where('f.current', true)
      .whereNull('f.expired_at')
      .whereIn('f.classification', classifications)
      .whereRaw(filter.sql, filter.bindings as string[]);
  const kept = scoped(
    rt
      .db('fragments as f')
      .select('f.id', 'f.classification', rt.db.raw(`f.embedding::vector(${DIMS}) AS e`)),
    resolveReader('internal', pipeline.closure),
  );
  await rt.db.raw('DROP TABLE IF EXISTS bench_exact');
  await rt.db.raw(`CREATE UNLOGGED TABLE bench_exact AS ${kept.toString()}`);
  type Row = { id: string; distance: number };
  const truths: Row[][] = [];
  for (const q of measured) {
    const res = await rt.db.raw(
      `SELECT id, e <=> ?::vector(${DIMS}) AS distance FROM bench_exact WHERE classification = ANY(?) ORDER BY distance LIMIT ${K}`,
      [`[${q.vector.join(',')}]`, scopeOf(q).classifications],
    );
    truths.push(res.rows as Row[]);
  }
  const fullExact = (q: Query): Promise<Row[]> =>
    rt.db.transaction(async (trx) => {
      await trx.raw('SET LOCAL enable_indexscan = off');
      const distance = `(f.embedding::vector(${DIMS})) <=> ?::vector(${DIMS})`;
      const literal = `[${q.vector.join(',')}]`;
      return (await scoped(
        trx('fragments as f').select('f.id', trx.raw(`${distance} AS distance`, [literal])),
        scopeOf(q).classifications,
      )
        .orderByRaw(distance, [literal])
        .limit(K)) as Row[];
    });
  const exactMs: number[] = [];
  let disagreements = 0;
  for (const [i, q] of measured.slice(0, settings.fullExactQueries).entries()) {
    const t = process.hrtime.bigint();
    const rows = await fullExact(q);
    exactMs.push(elapsedMs(t));
    const same =
      rows.length === truths[i]!.length &&
      rows.every((r, j) => Math.abs(r.distance - truths[i]![j]!.distance) < 1e-6);
    if (!same) disagreements += 1;
  }
  if (disagreements > 0)
    log(`WARNING: the scratch-table exact scan disagreed with the full scan on ${disagreements} queries`);
  // The same without classification and filter, for a subset: how good the HNSW graph itself is
  // (iterative scans and filters aside).
  const unfilteredQueries = measured.slice(0, settings.unfilteredRecallQueries);
  const unfilteredRecall: Record<number, number | null> = { 40: null, 100: null };
  if (unfilteredQueries.length > 0) {
    const all = resolveReader('internal', pipeline.closure);
    await rt.db.raw('DROP TABLE IF EXISTS bench_exact_all');
    await rt.db.raw(
      `CREATE UNLOGGED TABLE bench_exact_all AS ${rt
        .db('fragments as f')
        .select('f.id', rt.db.raw(`f.embedding::vector(${DIMS}) AS e`))
        .where('f.pipeline_id', pipelineId)
        .where('f.embedding_model_id', modelId)
        .where('f.current', true)
        .whereNull('f.expired_at')
        .toString()}`,
    );
    const allTruths: Row[][] = [];
    for (const q of unfilteredQueries) {
      const res = await rt.db.raw(
        `SELECT id, e <=> ?::vector(${DIMS}) AS distance FROM bench_exact_all ORDER BY distance LIMIT ${K}`,
        [`[${q.vector.join(',')}]`],
      );
      allTruths.push(res.rows as Row[]);
    }
    for (const ef of efs) {
      const store = storeAt(ef);
      let hit = 0;
      let wanted = 0;
      for (const [i, q] of unfilteredQueries.entries()) {
        const truth = allTruths[i]!;
        const hits = await store.nearest({ ...scopeOf(q), classifications: all, filter: null }, q.vector, K);
        const kth = truth.length > 0 ? Number(truth[truth.length - 1]!.distance) : Infinity;
        const ids = new Set(truth.map((r) => r.id));
        hit += hits.filter((h) => ids.has(h.id) || h.distance <= kth + 1e-6).length;
        wanted += truth.length;
      }
      unfilteredRecall[ef] = round(wanted === 0 ? 1 : hit / wanted, 4);
    }
  }

  const recall: Record<number, number> = {};
  for (const ef of efs) {
    let hit = 0;
    let wanted = 0;
    for (const [i, truth] of truths.entries()) {
      // Ties at the k-th distance count as found: any of them is a correct answer.
      const kth = truth.length > 0 ? Number(truth[truth.length - 1]!.distance) : Infinity;
      const ids = new Set(truth.map((r) => r.id));
      hit += found[ef]![i]!.filter((h) => ids.has(h.id) || h.distance <= kth + 1e-6).length;
      wanted += truth.length;
    }
    recall[ef] = round(wanted === 0 ? 1 : hit / wanted, 4);
  }

  const embed: number[] = measured.map((q) => {
    const t = process.hrtime.bigint();
    hashEmbedding(q.text, DIMS);
    return elapsedMs(t);
  });

  return {
    queries: measured.length,
    short_results: short,
    http_ms: summarise(samples.http!),
    http_equality_filter_ms: summarise(samples['http-eq']!),
    direct_store_ms: Object.fromEntries(
      efs.map((ef) => [`ef${ef}`, summarise(samples[`store:${ef}`]!)]),
    ) as Record<string, Summary>,
    sql_statement_ms: summarise(samples.sql!),
    exact_scan_ms: summarise(exactMs),
    exact_check_disagreements: disagreements,
    embed_query_ms: summarise(embed),
    recall_at_5: { ef40: recall[40]!, ef100: recall[100]!, configured: recall[stack.config.efSearch]! },
    /** Recall against store latency per ef_search (filtered; unfiltered on the subset). */
    trade_off: efs.map((ef) => ({
      ef_search: ef,
      recall_at_5: recall[ef]!,
      unfiltered_recall_at_5: unfilteredRecall[ef] ?? null,
      store_p50_ms: summarise(samples[`store:${ef}`]!).p50,
      store_p95_ms: summarise(samples[`store:${ef}`]!).p95,
    })),
    /** Without classification and filter, over the first `unfilteredRecallQueries` queries. */
    unfiltered_recall_at_5: {
      queries: unfilteredQueries.length,
      ef40: unfilteredRecall[40],
      ef100: unfilteredRecall[100],
      configured: unfilteredRecall[stack.config.efSearch],
    },
    plan,
  };
}

// ---- main -----------------------------------------------------------------------------------

// The Temporal runtime turns SIGINT/SIGTERM into a worker shutdown and keeps the process alive:
// note the signal, so the run stops, cleans up (the database) and exits.
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (interrupted = true));

async function main(): Promise<void> {
  const started = process.hrtime.bigint();
  // One batch request of BENCH_SMALL_DOCUMENTS documents (SPEC's default limit is 1000 a request).
  const stack = await startBenchStack('retrieval', {
    AGENTRY_LIMIT_DOCUMENTS_PER_BATCH: String(Math.max(1000, settings.smallDocuments)),
  });
  try {
    log(
      `database ${stack.databaseName}; ingestion batch ${stack.config.ingestion.batchSize}, ` +
        `parallelism ${stack.config.ingestion.parallelism}, db pool ${stack.config.dbPoolMax}, ef_search ${stack.config.efSearch}`,
    );
    // The index's build parameters, for the trade-off (the product's defaults unless given).
    const { pipelineId, modelId } = await createPipeline(
      stack,
      'bench-retrieval',
      settings.efConstruction ? { ef_construction: settings.efConstruction } : undefined,
    );
    log(`ingesting ${settings.smallDocuments} one-fragment documents in one batch request`);
    const small = await smallDocuments(stack);
    log(`small documents ready in ${small.ready_s} s, indexed in ${small.index_ready_s} s`);
    const ingestion = await ingest(stack, pipelineId, modelId);
    log(`ingested ${ingestion.fragments} fragments in ${ingestion.wall_s} s; analysing`);
    await stack.rt.db.raw('ANALYZE fragments');
    const sizes = (
      await stack.rt.db.raw(`SELECT pg_size_pretty(pg_relation_size('fragments')) AS heap,
        pg_size_pretty(pg_total_relation_size('fragments')) AS total,
        (SELECT pg_size_pretty(pg_relation_size(i.indexrelid)) FROM pg_index i
          WHERE i.indrelid = 'fragments'::regclass AND i.indexrelid::regclass::text LIKE 'fragments_hnsw_%' LIMIT 1) AS hnsw_index,
        current_setting('shared_buffers') AS shared_buffers`)
    ).rows[0] as Record<string, string>;
    log(`searching (${settings.warmup} warm-up + ${settings.queries} queries)`);
    const searching = await search(stack, pipelineId, modelId);
    const figures: Figure[] = [
      { figure: 'ingestion', value: ingestion.fragments_per_s, unit: 'fragments/s', target: { min: 1000 } },
      {
        figure: `${small.documents} one-fragment documents ready`,
        value: small.ready_s,
        unit: 's',
        target: { max: 3 },
      },
      { figure: '  … and their index built', value: small.index_ready_s, unit: 's' },
      { figure: '  ingestion: documents ready', value: ingestion.documents_ready_s, unit: 's' },
      { figure: '  ingestion: index built after', value: ingestion.index_build_s, unit: 's' },
      { figure: 'search p50 (HTTP)', value: searching.http_ms.p50, unit: 'ms', target: { max: 5 } },
      { figure: 'search p95 (HTTP)', value: searching.http_ms.p95, unit: 'ms', target: { max: 15 } },
      {
        figure: '  search p50 (HTTP, equality filter 1 %)',
        value: searching.http_equality_filter_ms.p50,
        unit: 'ms',
      },
      {
        figure: '  search p95 (HTTP, equality filter 1 %)',
        value: searching.http_equality_filter_ms.p95,
        unit: 'ms',
      },
      {
        figure: `recall@5, default (ef_search ${stack.config.efSearch}, pool 2k)`,
        value: searching.recall_at_5.configured,
        unit: '',
        target: { min: 0.95 },
      },
      {
        figure: 'recall@5, ef_search 40',
        value: searching.recall_at_5.ef40,
        unit: '',
        target: { min: 0.95 },
      },
      {
        figure: 'recall@5, ef_search 100',
        value: searching.recall_at_5.ef100,
        unit: '',
        target: { min: 0.95 },
      },
      { figure: '  baseline: store p50 (ef 100)', value: searching.direct_store_ms.ef100!.p50, unit: 'ms' },
      { figure: '  baseline: store p95 (ef 100)', value: searching.direct_store_ms.ef100!.p95, unit: 'ms' },
      { figure: '  baseline: store p50 (ef 40)', value: searching.direct_store_ms.ef40!.p50, unit: 'ms' },
      { figure: '  baseline: one SQL statement p50', value: searching.sql_statement_ms.p50, unit: 'ms' },
      { figure: '  baseline: one SQL statement p95', value: searching.sql_statement_ms.p95, unit: 'ms' },
      ...(searching.exact_scan_ms.p50 >= 0
        ? [{ figure: '  full exact scan p50 (no HNSW)', value: searching.exact_scan_ms.p50, unit: 'ms' }]
        : []),
      ...(searching.unfiltered_recall_at_5.queries > 0
        ? [
            {
              figure: `  recall@5 unfiltered, default (ef ${stack.config.efSearch})`,
              value: searching.unfiltered_recall_at_5.configured!,
              unit: '',
            },
            {
              figure: '  recall@5 unfiltered, ef 40',
              value: searching.unfiltered_recall_at_5.ef40!,
              unit: '',
            },
            {
              figure: '  recall@5 unfiltered, ef 100',
              value: searching.unfiltered_recall_at_5.ef100!,
              unit: '',
            },
          ]
        : []),
    ];
    const runSeconds = round(elapsedMs(started) / 1000, 1);
    printTable(
      `retrieval: ${ingestion.fragments} fragments, ${DIMS} dims, k=${K}, classification + 5 % filter, ${searching.queries} queries`,
      figures,
    );
    const c = ingestion.cpu;
    const per1k = (x: number | null) =>
      x === null ? 'n/a' : `${round((x / ingestion.fragments) * 1000, 2)} s`;
    console.log(
      `ingestion CPU per 1000 fragments: postgres ${per1k(c.postgres_s)}, node (API + worker + client) ` +
        `${per1k(c.node_s)}, temporal ${per1k(c.temporal_s)}, other processes ${per1k(c.other_s)}; ` +
        `machine busy ${c.machine_busy_s ?? 'n/a'} of ${c.available_s} CPU-s`,
    );
    console.log(
      `fragments: heap ${sizes.heap}, total ${sizes.total}, HNSW index ${sizes.hnsw_index}; shared_buffers ${sizes.shared_buffers}`,
    );
    if (searching.short_results > 0)
      console.log(`WARNING: ${searching.short_results} searches returned fewer than ${K} fragments`);
    console.log('recall@5 against latency (store, no HTTP), per ef_search:');
    for (const t of searching.trade_off)
      console.log(
        `  ef_search ${String(t.ef_search).padStart(4)}: recall ${t.recall_at_5} filtered, ` +
          `${t.unfiltered_recall_at_5 ?? 'n/a'} unfiltered; store p50 ${t.store_p50_ms} ms, p95 ${t.store_p95_ms} ms`,
      );
    console.log(`plan of the search statement (ef_search ${stack.config.efSearch}):`);
    for (const line of searching.plan) console.log(`  ${line}`);
    const file = writeResults('retrieval', {
      date: new Date().toISOString(),
      machine: machine(),
      run_seconds: runSeconds,
      settings: {
        ...settings,
        dims: DIMS,
        k: K,
        filter: FILTER,
        ingestion_batch_size: stack.config.ingestion.batchSize,
        ingestion_parallelism: stack.config.ingestion.parallelism,
        db_pool_max: stack.config.dbPoolMax,
        server_ef_search: stack.config.efSearch,
      },
      fragments: ingestion.fragments,
      // The headline figures under the names the issue asks for (filtered, the default settings).
      search_p50_ms: searching.http_ms.p50,
      search_p95_ms: searching.http_ms.p95,
      recall_at_5: searching.recall_at_5.configured,
      ingest_per_s: ingestion.fragments_per_s,
      sizes,
      small_documents: small,
      ingestion,
      search: searching,
      figures: figuresJson(figures),
    });
    console.log(`\nwritten to ${file} (run time ${runSeconds} s)`);
  } finally {
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
