// Embedding models (SPEC §3). Creating one also creates its partial HNSW expression index over
// `embedding::vector(size)` (SR-5), in the same transaction; deleting drops it.
import type { Knex } from 'knex';
import { Conflict } from '../domain/errors';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { Principal } from '../domain/permissions';
import type { KeyRing } from '../infra/crypto';
import * as named from './named-resource';
import { uniqueName } from './sql-helpers';
import { hnswIndexDdl, hnswIndexName, nextIndexName, type HnswParameters } from './vector-index';

export interface EmbeddingModel extends named.Resource {
  provider: 'hash' | 'openai';
  /** Provider parameters without the api key. */
  parameters: Record<string, unknown>;
  hasApiKey: boolean;
  size: number;
  /** The HNSW index's build parameters (pgvector's `m`, `ef_construction`). */
  index: HnswParameters;
}

interface Row extends named.Row {
  provider: 'hash' | 'openai';
  parameters: Record<string, unknown>;
  has_api_key: boolean;
  size: number;
  hnsw_m: number;
  hnsw_ef_construction: number;
}

export const EMBEDDING_MODEL_FIELDS: ListFields = named.fields({ provider: 'string', size: 'number' });

const SELECT = [
  ...named.columns('provider', 'parameters', 'size', 'hnsw_m', 'hnsw_ef_construction'),
  'api_key_cipher IS NOT NULL AS has_api_key',
];

const toModel = (r: Row): EmbeddingModel => ({
  ...named.of(r),
  provider: r.provider,
  parameters: r.parameters,
  hasApiKey: r.has_api_key,
  size: r.size,
  index: { m: r.hnsw_m, efConstruction: r.hnsw_ef_construction },
});

export class EmbeddingModelStore {
  /** The selected columns, the computed `has_api_key` as raw SQL; built once. */
  private readonly columns: (string | Knex.Raw)[];
  private readonly table: named.Table<Row, EmbeddingModel>;

  constructor(
    private readonly db: Knex,
    private readonly keyring: KeyRing,
  ) {
    this.columns = SELECT.map((c) => (c.includes(' ') ? db.raw(c) : c));
    this.table = {
      table: 'embedding_models',
      label: 'Embedding model',
      select: this.columns as unknown as string[],
      fields: EMBEDDING_MODEL_FIELDS,
      toItem: toModel,
    };
  }

  private select(db: Knex | Knex.Transaction = this.db) {
    return db('embedding_models').select(this.columns);
  }

  async get(id: string): Promise<EmbeddingModel | null> {
    const row = (await this.select().where({ id }).first()) as Row | undefined;
    return row ? toModel(row) : null;
  }

  /** The provider's api key, decrypted (activities and synchronous search only). */
  async apiKey(id: string): Promise<string | undefined> {
    const row = await this.db('embedding_models').where({ id }).first('api_key_cipher');
    return row?.api_key_cipher
      ? this.keyring.decrypt('embedding-api-key', row.api_key_cipher as Buffer).toString('utf8')
      : undefined;
  }

  async create(
    model: Omit<EmbeddingModel, 'created_at' | 'updated_at' | 'hasApiKey'> & { apiKey?: string },
  ): Promise<EmbeddingModel> {
    const now = new Date();
    await uniqueName(this.table.label, model.name, () =>
      this.db.transaction(async (trx) => {
        await trx('embedding_models').insert({
          ...named.newRow(model, now),
          provider: model.provider,
          parameters: JSON.stringify(model.parameters),
          api_key_cipher: model.apiKey ? this.keyring.encrypt('embedding-api-key', model.apiKey) : null,
          size: model.size,
          hnsw_m: model.index.m,
          hnsw_ef_construction: model.index.efConstruction,
        });
        await trx.raw(hnswIndexDdl(model));
      }),
    );
    return (await this.get(model.id))!;
  }

  /** Name, description and the index's parameters (the index itself is rebuilt by reconcile). */
  async update(
    id: string,
    patch: { name?: string; description?: string | null; index?: HnswParameters },
  ): Promise<EmbeddingModel> {
    const { index, ...fields } = patch;
    return named.update(this.db, this.table, id, {
      ...fields,
      ...(index ? { hnsw_m: index.m, hnsw_ef_construction: index.efConstruction } : {}),
    });
  }

  /** Every model's index parameters: what the periodic index check compares with PostgreSQL's. */
  async indexParameters(): Promise<Pick<EmbeddingModel, 'id' | 'size' | 'index'>[]> {
    const rows = (await this.db('embedding_models').select(
      'id',
      'size',
      'hnsw_m',
      'hnsw_ef_construction',
    )) as Row[];
    return rows.map((r) => ({
      id: r.id,
      size: r.size,
      index: { m: r.hnsw_m, efConstruction: r.hnsw_ef_construction },
    }));
  }

  async delete(id: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const used = await trx('pipelines').where({ embedding_model_id: id }).first('name');
      if (used) throw new Conflict(`Embedding model is used by pipeline ${used.name as string}`);
      await trx.raw(`DROP INDEX IF EXISTS ${hnswIndexName(id)}, ${nextIndexName(id)}`);
      await trx('fragments').where({ embedding_model_id: id }).delete();
      await trx('embedding_models').where({ id }).delete();
    });
  }

  list(principal: Principal, req: ListRequest): Promise<ListPage<EmbeddingModel>> {
    return named.list(this.db, this.table, principal, req);
  }
}
