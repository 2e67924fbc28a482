// Each embedding model's partial HNSW index over `embedding::vector(size)` (SR-5): its state, and
// its deferral and build around large loads (issue 15). Inserting a fragment into an HNSW index
// costs ≈ 2 ms of CPU at ef_construction 200; building the index over a finished load costs a
// fraction of that and runs on parallel maintenance workers. So a large load into a small set
// drops the index first and builds it afterwards, CONCURRENTLY: meanwhile searches scan exactly
// (an invalid index is never used), slower but never wrong.
import type { Knex } from 'knex';
import type pg from 'pg';
import { isUuid } from '../infra/ids';
import type { EmbeddingModel } from './embedding-model-store';

export type VectorIndexState = 'ready' | 'building' | 'absent';

/** A load of at least this many fragments may defer the index (docs/decisions.md). */
export const BULK_LOAD_MIN_FRAGMENTS = 1000;
/** …when the model has at most this many: an exact scan of them takes ≈ 0.1 s (docs/decisions.md). */
export const DEFER_MAX_FRAGMENTS = 20_000;

export interface IndexBuildSettings {
  /** `maintenance_work_mem` of a build, in MB: the graph should fit (≈ 2 KB per 384-dim fragment). */
  memoryMb: number;
  /** `max_parallel_maintenance_workers` of a build. */
  parallelWorkers: number;
}

/** The index of one model's vectors; the id is a server-generated UUID, checked before use. */
export function hnswIndexName(modelId: string): string {
  if (!isUuid(modelId)) throw new Error('invalid embedding model id');
  return `fragments_hnsw_${modelId.replace(/-/g, '')}`;
}

/** The index's DDL. DDL takes no bind parameters; the id, size and parameters are validated server values. */
export function hnswIndexDdl(
  model: Pick<EmbeddingModel, 'id' | 'size' | 'index'>,
  concurrently = false,
): string {
  const [size, m, ef] = [model.size, model.index.m, model.index.efConstruction].map(Math.trunc);
  return (
    `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}${hnswIndexName(model.id)} ON fragments ` +
    `USING hnsw ((embedding::vector(${size})) vector_cosine_ops) WITH (m = ${m}, ef_construction = ${ef}) ` +
    `WHERE embedding_model_id = '${model.id}'`
  );
}

export class VectorIndexStore {
  constructor(
    private readonly db: Knex,
    private readonly build: IndexBuildSettings,
  ) {}

  /** `building` while a build runs; an index a failed build left invalid is `absent`. */
  async state(modelId: string): Promise<VectorIndexState> {
    const row = (
      await this.db.raw(
        `SELECT i.indisvalid AS valid,
           EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid) AS building
         FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ?`,
        [hnswIndexName(modelId)],
      )
    ).rows[0] as { valid: boolean; building: boolean } | undefined;
    if (!row) return 'absent';
    return row.valid ? 'ready' : row.building ? 'building' : 'absent';
  }

  /**
   * Before a load of `incoming` fragments: drops the model's index when the load is large and the
   * model's set small (see the constants), so that the load pays no HNSW insert per fragment.
   * Returns whether the index is now absent (dropped here or before), i.e. needs a build.
   */
  async deferForLoad(modelId: string, incoming: number): Promise<boolean> {
    const state = await this.state(modelId);
    if (state !== 'ready') return state === 'absent';
    if (incoming < BULK_LOAD_MIN_FRAGMENTS) return false;
    const { n } = (
      await this.db.raw(
        'SELECT count(*)::int AS n FROM (SELECT 1 FROM fragments WHERE embedding_model_id = ? LIMIT ?) s',
        [modelId, DEFER_MAX_FRAGMENTS + 1],
      )
    ).rows[0] as { n: number };
    if (n > DEFER_MAX_FRAGMENTS) return false;
    return (
      (await this.exclusively(modelId, async (conn) => {
        await conn.query(`DROP INDEX CONCURRENTLY IF EXISTS ${hnswIndexName(modelId)}`);
        return true;
      })) ?? false
    );
  }

  /**
   * Builds the model's index if it is absent, CONCURRENTLY (writes and searches go on), with the
   * build settings; an invalid index a failed build left is dropped first. `busy` when another
   * process is building or deferring it.
   */
  async buildIfAbsent(
    model: Pick<EmbeddingModel, 'id' | 'size' | 'index'>,
  ): Promise<'built' | 'ready' | 'busy'> {
    const outcome = await this.exclusively(model.id, async (conn) => {
      if ((await this.state(model.id)) === 'ready') return 'ready' as const;
      await conn.query(`DROP INDEX CONCURRENTLY IF EXISTS ${hnswIndexName(model.id)}`);
      await conn.query(`SET maintenance_work_mem = '${Math.trunc(this.build.memoryMb)}MB'`);
      await conn.query(`SET max_parallel_maintenance_workers = ${Math.trunc(this.build.parallelWorkers)}`);
      try {
        await conn.query(hnswIndexDdl(model, true));
      } finally {
        await conn.query('RESET maintenance_work_mem; RESET max_parallel_maintenance_workers');
      }
      return 'built' as const;
    });
    return outcome ?? 'busy';
  }

  /**
   * Runs `work` on a connection of its own (CONCURRENTLY cannot run in a transaction) holding the
   * model's index lock; undefined when another session holds it. The lock is a session lock: a
   * process that dies releases it with its connection.
   */
  private async exclusively<T>(
    modelId: string,
    work: (conn: pg.Client) => Promise<T>,
  ): Promise<T | undefined> {
    const conn = (await this.db.client.acquireConnection()) as pg.Client;
    const key = `vector-index:${modelId}`;
    try {
      const locked = (await conn.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key])).rows[0]
        .locked as boolean;
      if (!locked) return undefined;
      try {
        return await work(conn);
      } finally {
        await conn.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
      }
    } finally {
      await this.db.client.releaseConnection(conn);
    }
  }
}
