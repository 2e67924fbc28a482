// Foundation schema: API keys, LLMs, execution records and their encrypted content.
// Timestamps carry millisecond precision so that list cursors (which travel as ISO strings)
// compare exactly with stored values.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS vector');

  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable().unique();
    t.text('description');
    t.jsonb('permissions').notNullable().defaultTo('[]');
    t.binary('secret_hmac').notNullable();
    t.uuid('owner_key_id');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
  });

  await knex.schema.createTable('llms', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable().unique();
    t.text('description');
    t.text('endpoint').notNullable();
    t.text('model').notNullable();
    t.text('provider').notNullable();
    t.binary('api_key_cipher').notNullable();
    t.uuid('owner_key_id');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
  });

  await knex.schema.createTable('executions', (t) => {
    t.uuid('id').primary();
    t.text('kind').notNullable();
    t.text('status').notNullable();
    t.uuid('api_key_id').notNullable();
    t.uuid('llm_id');
    t.uuid('agent_id');
    t.integer('agent_version');
    t.uuid('pipeline_id');
    t.uuid('parent_execution_id');
    t.uuid('trace_id');
    t.text('workflow_id').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('input_tokens');
    t.integer('output_tokens');
    t.integer('error_status');
    t.text('error_type');
    t.timestamp('started_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('finished_at', { useTz: true, precision: 3 });
    t.index(['api_key_id', 'started_at']);
  });

  await knex.schema.createTable('execution_payloads', (t) => {
    t.uuid('id').primary();
    t.uuid('execution_id').notNullable().references('executions.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.binary('cipher').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('expires_at', { useTz: true, precision: 3 });
    t.unique(['execution_id', 'kind']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('execution_payloads');
  await knex.schema.dropTable('executions');
  await knex.schema.dropTable('llms');
  await knex.schema.dropTable('api_keys');
}
