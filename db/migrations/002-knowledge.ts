// Knowledge pipelines (SPEC §3–§6): embedding models, text splitters, pipelines, versioned
// documents and their fragments. Fragments of every embedding model share one table; the
// `embedding` column is an untyped `vector`, and each model gets its own partial HNSW index over
// `embedding::vector(N)` when it is created (db/embedding-model-store.ts, SR-5).
import type { Knex } from 'knex';

const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('embedding_models', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable().unique();
    t.text('description');
    t.text('provider').notNullable();
    t.jsonb('parameters').notNullable().defaultTo('{}');
    t.binary('api_key_cipher');
    t.integer('size').notNullable();
    t.uuid('owner_key_id');
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
  });

  await knex.schema.createTable('text_splitters', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable().unique();
    t.text('description');
    t.text('provider').notNullable();
    t.jsonb('parameters').notNullable();
    t.uuid('owner_key_id');
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
  });

  await knex.schema.createTable('pipelines', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable().unique();
    t.text('description');
    t.uuid('embedding_model_id').notNullable().references('embedding_models.id');
    t.uuid('text_splitter_id').notNullable().references('text_splitters.id');
    t.jsonb('classifications').notNullable();
    t.jsonb('closure').notNullable();
    t.jsonb('metadata_schema');
    t.text('text_search_config').notNullable().defaultTo('simple');
    t.uuid('owner_key_id');
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
  });

  // One row per version; `document_id` is stable across versions (DOC-2).
  await knex.schema.createTable('document_versions', (t) => {
    t.uuid('id').primary();
    t.uuid('document_id').notNullable();
    t.uuid('pipeline_id').notNullable().references('pipelines.id').onDelete('CASCADE');
    t.text('external_id');
    t.text('classification').notNullable();
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.bigInteger('version').notNullable();
    t.text('status').notNullable();
    t.text('error');
    t.binary('content_cipher');
    t.uuid('text_splitter_id').notNullable();
    t.integer('fragment_count');
    ts(t, 'expired_at');
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
    t.index(['pipeline_id', 'document_id']);
    t.index(['pipeline_id', 'external_id']);
  });

  await knex.schema.createTable('fragments', (t) => {
    t.uuid('id').primary();
    t.uuid('document_id').notNullable();
    t.uuid('document_version_id').notNullable().references('document_versions.id').onDelete('CASCADE');
    t.uuid('pipeline_id').notNullable();
    t.uuid('embedding_model_id').notNullable();
    t.text('classification').notNullable();
    t.jsonb('metadata').notNullable();
    t.integer('ordinal').notNullable();
    t.bigInteger('version').notNullable();
    t.binary('text_cipher').notNullable();
    // Filled by the embedding activity; staged rows have none yet.
    t.specificType('embedding', 'vector');
    t.specificType('tsv', 'tsvector');
    // Staged fragments of a version still being ingested are not searchable.
    t.boolean('current').notNullable().defaultTo(false);
    ts(t, 'expired_at');
    ts(t, 'created_at').notNullable();
    t.unique(['document_version_id', 'ordinal']);
  });
  await knex.raw(
    'CREATE INDEX fragments_searchable ON fragments (pipeline_id, classification) WHERE current AND expired_at IS NULL',
  );
  await knex.raw(
    'CREATE INDEX fragments_tsv ON fragments USING gin (tsv) WHERE current AND expired_at IS NULL',
  );
  await knex.raw('CREATE INDEX fragments_metadata ON fragments USING gin (metadata jsonb_path_ops)');
  await knex.raw('CREATE INDEX fragments_document ON fragments (document_id)');

  // Ingestion stages a version's chunks and their embeddings here, outside `fragments`, and copies
  // them in when the version becomes current (DOC-2): each fragment is written to `fragments` and
  // its HNSW index once, instead of once per ingestion step (every UPDATE of a row that has an
  // embedding inserts it into the HNSW index again).
  await knex.schema.createTable('fragment_staging', (t) => {
    t.uuid('id').primary();
    t.uuid('document_version_id').notNullable().references('document_versions.id').onDelete('CASCADE');
    t.uuid('embedding_model_id').notNullable();
    t.integer('ordinal').notNullable();
    t.binary('text_cipher').notNullable();
    t.specificType('embedding', 'vector');
    t.specificType('tsv', 'tsvector');
    t.unique(['document_version_id', 'ordinal']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('fragment_staging');
  await knex.schema.dropTable('fragments');
  await knex.schema.dropTable('document_versions');
  await knex.schema.dropTable('pipelines');
  await knex.schema.dropTable('text_splitters');
  await knex.schema.dropTable('embedding_models');
}
