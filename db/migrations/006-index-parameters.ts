// Issue 15: each embedding model's HNSW build parameters (pgvector's `m` and `ef_construction`),
// chosen when the model is created and used for its partial index. Existing models keep the
// values their index was built with, pgvector's defaults.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'ALTER TABLE embedding_models ADD COLUMN hnsw_m integer NOT NULL DEFAULT 16, ADD COLUMN hnsw_ef_construction integer NOT NULL DEFAULT 64',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE embedding_models DROP COLUMN hnsw_m, DROP COLUMN hnsw_ef_construction');
}
