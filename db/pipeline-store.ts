// Pipelines (SPEC §4): an embedding model, a text splitter, a classification hierarchy stored
// with its closure (CL-1), an optional metadata JSON Schema (MD-1) and a text search config.
import type { Knex } from 'knex';
import type { ClassificationLevel, Closure } from '../domain/classifications';
import { Conflict, InvalidInput } from '../domain/errors';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { Principal } from '../domain/permissions';
import { LookupCache } from '../infra/lookup-cache';
import * as named from './named-resource';
import { uniqueName } from './sql-helpers';

export interface Pipeline extends named.Resource {
  embedding_model_id: string;
  text_splitter_id: string;
  classifications: ClassificationLevel[];
  closure: Closure;
  metadata_schema: Record<string, unknown> | null;
  text_search_config: string;
}

/** The row holds the pipeline's own fields under the same (snake_case) names. */
type Row = named.Row & Omit<Pipeline, keyof named.Resource>;

export const PIPELINE_FIELDS: ListFields = named.fields({
  embedding_model_id: 'uuid',
  text_splitter_id: 'uuid',
  text_search_config: 'string',
});
const SELECT = named.columns(
  'embedding_model_id',
  'text_splitter_id',
  'classifications',
  'closure',
  'metadata_schema',
  'text_search_config',
);

const toPipeline = (r: Row): Pipeline => ({ ...r, ownerKeyId: r.owner_key_id });
const TABLE: named.Table<Row, Pipeline> = {
  table: 'pipelines',
  label: 'Pipeline',
  select: SELECT,
  fields: PIPELINE_FIELDS,
  toItem: toPipeline,
};

type NewPipeline = Omit<Pipeline, 'created_at' | 'updated_at'>;
export type PipelinePatch = Partial<
  Pick<
    Pipeline,
    | 'name'
    | 'description'
    | 'classifications'
    | 'closure'
    | 'metadata_schema'
    | 'text_splitter_id'
    | 'embedding_model_id'
  >
>;

export class PipelineStore {
  constructor(
    private readonly db: Knex,
    /** Copies for the search path; this store's update and delete invalidate them. */
    private readonly cache = new LookupCache<Pipeline | null>(),
  ) {}

  async get(id: string): Promise<Pipeline | null> {
    const row = (await this.db('pipelines').where({ id }).first(SELECT)) as Row | undefined;
    return row ? toPipeline(row) : null;
  }

  /** The id of the pipeline named `name`, or null. */
  idByName(name: string): Promise<string | null> {
    return named.idByName(this.db, 'pipelines', name);
  }

  /**
   * `get` from a copy at most LOOKUP_CACHE_TTL_MS old (a change through this store is seen at
   * once; infra/lookup-cache.ts). The object is shared: callers must not modify it.
   */
  getCached(id: string): Promise<Pipeline | null> {
    return this.cache.get(id, () => this.get(id));
  }

  /** Whether PostgreSQL knows the text search configuration (e.g. `simple`, `english`). */
  async isTextSearchConfig(name: string): Promise<boolean> {
    const row = await this.db('pg_ts_config').where({ cfgname: name }).first('oid');
    return row !== undefined;
  }

  async create(p: NewPipeline): Promise<Pipeline> {
    const now = new Date();
    const [row] = await uniqueName(TABLE.label, p.name, () =>
      this.db('pipelines')
        .insert({
          ...named.newRow(p, now),
          embedding_model_id: p.embedding_model_id,
          text_splitter_id: p.text_splitter_id,
          classifications: JSON.stringify(p.classifications),
          closure: JSON.stringify(p.closure),
          metadata_schema: p.metadata_schema === null ? null : JSON.stringify(p.metadata_schema),
          text_search_config: p.text_search_config,
        })
        .returning(SELECT),
    );
    return toPipeline(row as Row);
  }

  /** Applies a patch after the state checks of SPEC §4, in one transaction. */
  async update(id: string, patch: PipelinePatch): Promise<Pipeline> {
    const updated = await uniqueName(TABLE.label, patch.name, () =>
      this.db.transaction(async (trx) => {
        const current = (await trx('pipelines').where({ id }).forUpdate().first(SELECT)) as Row;
        const hasDocuments = await trx('document_versions')
          .where({ pipeline_id: id })
          .whereNull('expired_at')
          .first('id');
        if (
          patch.embedding_model_id &&
          patch.embedding_model_id !== current.embedding_model_id &&
          hasDocuments
        ) {
          throw new Conflict('The embedding model of a pipeline cannot change once it has documents');
        }
        if (patch.classifications) {
          const kept = new Set(patch.classifications.map((c) => c.name));
          const removed = current.classifications.map((c) => c.name).filter((n) => !kept.has(n));
          if (removed.length > 0) {
            const used = await trx('document_versions')
              .where({ pipeline_id: id })
              .whereNull('expired_at')
              .whereIn('classification', removed)
              .distinct('classification');
            if (used.length > 0) {
              throw new Conflict(
                `Classification level(s) used by current documents cannot be removed: ${used.map((u) => u.classification as string).join(', ')}`,
              );
            }
          }
        }
        const values: Record<string, unknown> = { updated_at: new Date() };
        for (const [key, value] of Object.entries(patch)) {
          if (value === undefined) continue;
          values[key] =
            key === 'classifications' || key === 'closure' || (key === 'metadata_schema' && value !== null)
              ? JSON.stringify(value)
              : value;
        }
        const [row] = await trx('pipelines').where({ id }).update(values).returning(SELECT);
        return toPipeline(row as Row);
      }),
    );
    // After the commit: a load between an earlier invalidation and the commit would keep the old row.
    this.cache.invalidate(id);
    return updated;
  }

  async delete(id: string): Promise<void> {
    await this.db('pipelines').where({ id }).delete();
    this.cache.invalidate(id);
  }

  list(principal: Principal, req: ListRequest): Promise<ListPage<Pipeline>> {
    return named.list(this.db, TABLE, principal, req);
  }
}

/** A reference to a missing object in a body is a 400 naming the field (SPEC §1). */
export function missingReference(field: string, id: string): InvalidInput {
  return new InvalidInput(`${field} names no existing object: ${id}`);
}
