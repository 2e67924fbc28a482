// Issue 15: a `documents:batch` request is one batch, ingested by one workflow in groups instead of
// a workflow per document; each document keeps its own version row, status and failure, and the
// batch's progress (documents and fragments done) is read from its versions.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('document_batches', (t) => {
    t.uuid('id').primary();
    t.uuid('pipeline_id').notNullable().references('pipelines.id').onDelete('CASCADE');
    t.integer('document_count').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
  });
  await knex.raw(
    'ALTER TABLE document_versions ADD COLUMN batch_id uuid REFERENCES document_batches(id) ON DELETE SET NULL',
  );
  await knex.raw(
    'CREATE INDEX document_versions_batch ON document_versions (batch_id) WHERE batch_id IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE document_versions DROP COLUMN batch_id');
  await knex.schema.dropTable('document_batches');
}
