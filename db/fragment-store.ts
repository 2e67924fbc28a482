// Vector and full-text search over current fragments (SPEC §6). The reader's classifications
// and the metadata filter are predicates of the same statement as the search (CL-3), and the
// vector search uses the embedding model's partial HNSW index: same cast, same predicate (SR-5),
// with iterative index scans so filtered searches still find k rows.
import type { Knex } from 'knex';
import { fromSql } from 'pgvector';
import type { DocumentStore, FragmentRecord } from './document-store';
import { FRAGMENT_COLUMNS } from './document-store';
import { vectorParameter } from './sql-helpers';
import type { SessionSettings } from './knex';

export interface SearchScope {
  pipelineId: string;
  embeddingModelId: string;
  /** Vector dimension of the model: the cast that matches its index. */
  size: number;
  /** Allowed classification levels (already resolved; empty = no access). */
  classifications: string[];
  /** Compiled metadata filter over `f.metadata`, or null. */
  filter: { sql: string; bindings: unknown[] } | null;
}

interface VectorHit extends FragmentRecord {
  distance: number;
  embedding?: number[];
}

interface TextHit extends FragmentRecord {
  rank: number;
}

const qualified = FRAGMENT_COLUMNS.map((c) => `f.${c}`);
// Written as knex's query builder wrote them, so the statement text and its plans stay the same.
const selectList = FRAGMENT_COLUMNS.map((c) => `"f"."${c}"`).join(', ');

/** The searchable rows of a scope (CL-3: the reader's classifications and the filter included). */
function scopePredicate(scope: SearchScope): { sql: string; bindings: Knex.RawBinding[] } {
  const parts = [
    '"f"."pipeline_id" = ?',
    '"f"."embedding_model_id" = ?',
    '"f"."current" = ?',
    '"f"."expired_at" is null',
    `"f"."classification" in (${scope.classifications.map(() => '?').join(', ')})`,
  ];
  const bindings: Knex.RawBinding[] = [
    scope.pipelineId,
    scope.embeddingModelId,
    true,
    ...scope.classifications,
  ];
  if (scope.filter) {
    parts.push(`(${scope.filter.sql})`);
    bindings.push(...(scope.filter.bindings as Knex.RawBinding[]));
  }
  return { sql: parts.join(' and '), bindings };
}

/**
 * The index is asked for this many times the rows wanted, and the pool is cut to the nearest
 * by exact distance: an iterative `relaxed_order` scan's first rows are not always its nearest.
 * At 100k fragments (ef_construction 200, ef_search 400) it lifted filtered recall@5 from
 * 0.938 to 0.963–0.979 (docs/decisions.md).
 */
const CANDIDATE_POOL_FACTOR = 2;

export class FragmentStore {
  constructor(
    private readonly db: Knex,
    private readonly documents: DocumentStore,
    private readonly efSearch: number,
    /** The settings `db`'s sessions already hold (createKnex), if any. */
    private readonly session?: SessionSettings,
  ) {}

  /**
   * The `limit` nearest current fragments by cosine distance, nearest first: a pool of
   * `pool` candidates from the HNSW index (default CANDIDATE_POOL_FACTOR × limit), re-ranked by
   * exact distance in the same statement. A pool that covers every candidate gives the exact result.
   */
  async nearest(
    scope: SearchScope,
    vector: number[],
    limit: number,
    withEmbeddings = false,
    pool = limit * CANDIDATE_POOL_FACTOR,
  ): Promise<VectorHit[]> {
    if (scope.classifications.length === 0 || limit === 0) return [];
    const size = Math.trunc(scope.size);
    // One raw statement: knex's query builder took 0.4–0.7 ms per search to compile it, the raw
    // text 0.1 ms (docs/decisions.md). The query vector goes once, in pgvector's binary form;
    // ORDER BY the select-list alias is still the index's ordering (the same expression).
    // MATERIALIZED: the pool is taken from the index first, then ordered exactly.
    const where = scopePredicate(scope);
    const embedding = withEmbeddings ? ', f.embedding::text AS embedding_text' : '';
    const statement =
      `with "pool" as materialized (select ${selectList}, ` +
      `(f.embedding::vector(${size})) <=> ?::vector(${size}) AS distance${embedding} ` +
      `from "fragments" as "f" where ${where.sql} order by "distance" asc limit ?) ` +
      'select * from "pool" order by "distance" asc limit ?';
    const bindings = [vectorParameter(vector), ...where.bindings, Math.max(pool, limit), limit];
    const search = async (db: Knex): Promise<unknown[]> =>
      ((await db.raw(statement, bindings)) as { rows: unknown[] }).rows;
    // Sessions that hold this store's settings search in one statement; otherwise the settings
    // are set for one transaction (SET LOCAL takes no parameters; set_config(…, true) is it).
    const rows =
      this.session && this.session.efSearch === this.efSearch
        ? await search(this.db)
        : await this.db.transaction(async (trx) => {
            await trx.raw(
              "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ?, true)",
              [String(Math.trunc(this.efSearch))],
            );
            return search(trx);
          });
    // relaxed_order may return rows slightly out of order: sort exactly.
    return (rows as Record<string, unknown>[])
      .map((r) => ({
        ...this.documents.toFragment(r),
        distance: Number(r.distance),
        ...(withEmbeddings ? { embedding: fromSql(r.embedding_text as string) as number[] } : {}),
      }))
      .sort((a, b) => a.distance - b.distance);
  }

  /**
   * SR-1 full_text: `websearch_to_tsquery` over the pipeline's config, ranked by `ts_rank_cd`, on
   * keyed lexemes (db/keyed-lexemes.ts): under a rotation, a fragment matches the query keyed
   * under its own secret, so its rank is the greater of the two.
   */
  async fullText(scope: SearchScope, config: string, query: string, limit: number): Promise<TextHit[]> {
    if (scope.classifications.length === 0 || limit === 0) return [];
    const queries = await this.documents.lexemes.queries(config, query, this.db);
    if (queries.length === 0) return [];
    const ranks = queries.map(() => 'ts_rank_cd(f.tsv, ?::tsquery)').join(', ');
    const where = scopePredicate(scope);
    const qb = this.db('fragments as f')
      .select([...qualified, this.db.raw(`greatest(${ranks}) AS rank`, queries)])
      .whereRaw(where.sql, where.bindings)
      .whereRaw(`(${queries.map(() => 'f.tsv @@ ?::tsquery').join(' or ')})`, queries)
      .orderBy('rank', 'desc')
      .orderBy('f.id')
      .limit(limit);
    const rows = (await qb) as Record<string, unknown>[];
    return rows.map((r) => ({ ...this.documents.toFragment(r), rank: Number(r.rank) }));
  }

  /** Fragments by id, in the order asked (texts decrypted); ids that are gone are skipped. */
  async byIds(ids: string[]): Promise<FragmentRecord[]> {
    if (ids.length === 0) return [];
    const rows = (await this.db('fragments as f').whereIn('f.id', ids).select(qualified)) as Record<
      string,
      unknown
    >[];
    const byId = new Map(rows.map((r) => [r.id as string, this.documents.toFragment(r)]));
    return ids.map((id) => byId.get(id)).filter((f): f is FragmentRecord => f !== undefined);
  }
}
