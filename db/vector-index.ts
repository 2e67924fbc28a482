// Each embedding model's partial HNSW index over `embedding::vector(size)` (SR-5): its state, and
// its deferral and build around large loads (issue 15). Inserting a fragment into an HNSW index
// costs ≈ 2 ms of CPU at ef_construction 200; building the index over a finished load costs a
// fraction of that and runs on parallel maintenance workers. So a large load into a small set
// drops the index first and builds it afterwards, CONCURRENTLY: meanwhile searches scan exactly
// (an invalid index is never used), slower but never wrong.
import type { Knex } from 'knex';
import type pg from 'pg';
import { isUuid } from '../infra/ids';

/** `rebuilding`: a valid index serves searches while one with new parameters is built (issue 26). */
type VectorIndexState = 'ready' | 'building' | 'rebuilding' | 'absent';

/** What an index maintenance did (`busy`: another session holds the model's index lock). */
export type IndexOutcome = 'built' | 'rebuilt' | 'ready' | 'busy';

export interface HnswParameters {
  m: number;
  efConstruction: number;
}

/**
 * m 16 (pgvector's) and ef_construction 200 (pgvector's is 64): at 100k fragments recall@5 went
 * from 0.65 to 0.96 at ef_search 400, for 1.8× the CPU per insert (docs/decisions.md). pgvector's
 * bounds: m 2–100, ef_construction 4–1000 and at least 2·m.
 */
export const DEFAULT_HNSW: HnswParameters = { m: 16, efConstruction: 200 };

/** What an index is built for: a model's id, its vectors' size and its index parameters. */
type IndexModel = { id: string; size: number; index: HnswParameters };

/** One of a model's two index names as PostgreSQL has it. */
interface IndexRow {
  name: string;
  valid: boolean;
  building: boolean;
  /** `pg_class.reloptions`, e.g. `{m=16,ef_construction=200}`. */
  options: string[] | null;
}

/** A load of at least this many fragments may defer the index (docs/decisions.md). */
const BULK_LOAD_MIN_FRAGMENTS = 1000;
/** …when the model has at most this many: an exact scan of them takes ≈ 0.1 s (docs/decisions.md). */
const DEFER_MAX_FRAGMENTS = 20_000;

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

/** The index a rebuild builds beside the model's own, renamed to it once valid. */
export function nextIndexName(modelId: string): string {
  return `${hnswIndexName(modelId)}_next`;
}

/** The index's DDL. DDL takes no bind parameters; the id, size and parameters are validated server values. */
export function hnswIndexDdl(
  model: IndexModel,
  concurrently = false,
  name = hnswIndexName(model.id),
): string {
  const [size, m, ef] = [model.size, model.index.m, model.index.efConstruction].map(Math.trunc);
  return (
    `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}${name} ON fragments ` +
    `USING hnsw ((embedding::vector(${size})) vector_cosine_ops) WITH (m = ${m}, ef_construction = ${ef}) ` +
    `WHERE embedding_model_id = '${model.id}'`
  );
}

/** Whether an index was built with the model's `m` and `ef_construction`. */
function matches(row: IndexRow, model: IndexModel): boolean {
  const options = new Map((row.options ?? []).map((o) => o.split('=') as [string, string]));
  return (
    Number(options.get('m')) === Math.trunc(model.index.m) &&
    Number(options.get('ef_construction')) === Math.trunc(model.index.efConstruction)
  );
}

export class VectorIndexStore {
  constructor(
    private readonly db: Knex,
    private readonly build: IndexBuildSettings,
  ) {}

  /** The model's index and a rebuild's, as PostgreSQL has them (absent ones are missing). */
  private async indexes(modelId: string, conn?: pg.Client): Promise<Map<string, IndexRow>> {
    const sql = `SELECT c.relname AS name, i.indisvalid AS valid, c.reloptions AS options,
         EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid) AS building
       FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname IN ($1, $2)`;
    const names = [hnswIndexName(modelId), nextIndexName(modelId)];
    const { rows } = (
      conn ? await conn.query(sql, names) : await this.db.raw(sql.replace(/\$\d/g, '?'), names)
    ) as { rows: IndexRow[] };
    return new Map(rows.map((r) => [r.name, r]));
  }

  /**
   * `building` while a first build runs, `rebuilding` while a valid index serves and a new one is
   * beside it; an index a failed build left invalid is `absent`.
   */
  async state(modelId: string): Promise<VectorIndexState> {
    const found = await this.indexes(modelId);
    const [current, next] = [found.get(hnswIndexName(modelId)), found.get(nextIndexName(modelId))];
    // A rebuild's index, building or built and not yet swapped in (or left by a dead rebuild, until
    // the sweep finishes or drops it).
    if (current?.valid) return next ? 'rebuilding' : 'ready';
    // Between the swap's drop and rename the new index alone serves.
    if (next?.valid) return 'rebuilding';
    return current?.building ? 'building' : 'absent';
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
  async buildIfAbsent(model: IndexModel): Promise<'built' | 'ready' | 'busy'> {
    const outcome = await this.exclusively(model.id, async (conn) => {
      if ((await this.indexes(model.id, conn)).get(hnswIndexName(model.id))?.valid) return 'ready' as const;
      await this.create(conn, model, hnswIndexName(model.id));
      return 'built' as const;
    });
    return outcome ?? 'busy';
  }

  /**
   * Brings the model's index to its parameters (issue 26): builds it if absent; when its `m` or
   * `ef_construction` differ from the model's (or `rebuild`), builds a new one CONCURRENTLY beside
   * it and swaps them, so searches use the old index until the new one is valid, then the new one.
   * What a process that died midway left is finished (a valid new index) or dropped (an invalid one).
   */
  async reconcile(model: IndexModel, rebuild = false): Promise<IndexOutcome> {
    const [own, next] = [hnswIndexName(model.id), nextIndexName(model.id)];
    const outcome = await this.exclusively(model.id, async (conn): Promise<IndexOutcome> => {
      const found = await this.indexes(model.id, conn);
      const left = found.get(next);
      if (left?.valid && matches(left, model)) return this.swap(conn, own, next);
      if (left) await conn.query(`DROP INDEX CONCURRENTLY IF EXISTS ${next}`);
      const current = found.get(own);
      if (!current?.valid) {
        await this.create(conn, model, own);
        return 'built';
      }
      if (!rebuild && matches(current, model)) return 'ready';
      await this.create(conn, model, next);
      return this.swap(conn, own, next);
    });
    return outcome ?? 'busy';
  }

  /**
   * Whether the model's index needs no maintenance: valid, built with the model's parameters, and
   * no rebuild's index beside it. `absent` when there is no valid index.
   */
  async inOrder(model: IndexModel): Promise<boolean | 'absent'> {
    const found = await this.indexes(model.id);
    const own = found.get(hnswIndexName(model.id));
    if (!own?.valid) return 'absent';
    return matches(own, model) && !found.has(nextIndexName(model.id));
  }

  /**
   * The import batches of the model's pipelines whose documents are not all done, and whether any
   * document of them changed in the last `quietMs` (an import between two batches, or its last
   * batch about to build the index).
   */
  async loading(modelId: string, quietMs: number): Promise<{ batches: string[]; recent: boolean }> {
    const { rows } = (await this.db.raw(
      `SELECT DISTINCT v.batch_id AS id, v.updated_at > now() - make_interval(secs => ?) AS recent
       FROM document_versions v JOIN pipelines p ON p.id = v.pipeline_id
       WHERE p.embedding_model_id = ? AND v.batch_id IS NOT NULL
         AND (v.status IN ('pending', 'processing') OR v.updated_at > now() - make_interval(secs => ?))`,
      [quietMs / 1000, modelId, quietMs / 1000],
    )) as { rows: { id: string; recent: boolean }[] };
    return { batches: [...new Set(rows.map((r) => r.id))], recent: rows.some((r) => r.recent) };
  }

  /** A CONCURRENTLY build with the build settings; an invalid index of that name is dropped first. */
  private async create(conn: pg.Client, model: IndexModel, name: string): Promise<void> {
    await conn.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    await conn.query(`SET maintenance_work_mem = '${Math.trunc(this.build.memoryMb)}MB'`);
    await conn.query(`SET max_parallel_maintenance_workers = ${Math.trunc(this.build.parallelWorkers)}`);
    try {
      await conn.query(hnswIndexDdl(model, true, name));
    } finally {
      await conn.query('RESET maintenance_work_mem; RESET max_parallel_maintenance_workers');
    }
  }

  /**
   * The new index takes the model's index's name. Both are valid meanwhile (same expression, same
   * predicate: a search may use either); neither step blocks searches for longer than a catalog update.
   */
  private async swap(conn: pg.Client, own: string, next: string): Promise<'rebuilt'> {
    await conn.query(`DROP INDEX CONCURRENTLY IF EXISTS ${own}`);
    await conn.query(`ALTER INDEX ${next} RENAME TO ${own}`);
    return 'rebuilt';
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
