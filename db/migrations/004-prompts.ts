// Prompt library, routing policies and chains (SPEC §12, §13), the internal-execution columns of
// execution records (PC-11, CH-5, PV-6) and the `anonymous_executions` view in which seed 002's
// monitoring queries run unmodified (their unquoted camelCase names fold to lowercase).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('routing_policies', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable().unique();
    t.jsonb('llms').notNullable();
    t.uuid('owner_key_id');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
  });

  await knex.schema.createTable('prompts', (t) => {
    t.uuid('id').primary();
    t.text('prompt_id').notNullable().unique();
    t.text('name').notNullable();
    t.text('system_prompt');
    t.text('user_prompt').notNullable();
    t.double('temperature');
    t.jsonb('attachment');
    t.uuid('routing_policy_id').references('routing_policies.id');
    t.uuid('custom_gateway_id');
    t.boolean('requires_attachment').notNullable().defaultTo(false);
    t.boolean('requires_dynamic_data').notNullable().defaultTo(false);
    t.uuid('owner_key_id');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
  });

  // Who references which stored prompt: refuses deleting a referenced prompt (PC-1) and walks
  // the reference graph for cycles and depth at save time (PC-6, PC-7, AG-10).
  await knex.schema.createTable('prompt_references', (t) => {
    t.text('source_type').notNullable(); // prompt | agent | chain
    t.text('source_id').notNullable();
    // A referenced prompt cannot disappear under a concurrent save (PC-1: delete → 409).
    t.text('prompt_id').notNullable().references('prompts.prompt_id').onDelete('RESTRICT');
    t.primary(['source_type', 'source_id', 'prompt_id']);
    t.index(['prompt_id']);
  });

  await knex.schema.createTable('chains', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('description');
    t.jsonb('steps').notNullable();
    t.jsonb('tags').notNullable();
    t.boolean('stop_on_error').notNullable();
    t.integer('max_concurrency').notNullable();
    t.jsonb('metadata').notNullable();
    t.jsonb('guardrails').notNullable();
    t.integer('total_executions').notNullable().defaultTo(0);
    t.timestamp('last_executed_at', { useTz: true, precision: 3 });
    t.uuid('owner_key_id');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
  });

  await knex.schema.alterTable('executions', (t) => {
    t.boolean('is_internal').notNullable().defaultTo(false);
    t.integer('chain_depth');
    t.text('referenced_prompt_id');
    t.text('chain_id');
    t.integer('execution_time_ms');
    t.text('selected_provider');
    t.jsonb('metadata');
    t.timestamp('variables_instant', { useTz: true, precision: 3 });
    t.jsonb('variables_resolved');
    t.index(['parent_execution_id']);
  });

  await knex.raw(`
    CREATE VIEW anonymous_executions AS
    SELECT id,
           kind,
           status,
           is_internal AS isinternal,
           parent_execution_id AS parentexecutionid,
           chain_depth AS chaindepth,
           referenced_prompt_id AS referencedpromptid,
           chain_id AS chainid,
           execution_time_ms AS executiontimems,
           selected_provider AS selectedprovider,
           started_at AS executedat,
           finished_at AS finishedat,
           api_key_id AS apikeyid,
           llm_id AS llmid,
           input_tokens AS inputtokens,
           output_tokens AS outputtokens,
           metadata
      FROM executions`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP VIEW anonymous_executions');
  await knex.schema.alterTable('executions', (t) => {
    t.dropIndex(['parent_execution_id']);
    t.dropColumns(
      'is_internal',
      'chain_depth',
      'referenced_prompt_id',
      'chain_id',
      'execution_time_ms',
      'selected_provider',
      'metadata',
      'variables_instant',
      'variables_resolved',
    );
  });
  await knex.schema.dropTable('chains');
  await knex.schema.dropTable('prompt_references');
  await knex.schema.dropTable('prompts');
  await knex.schema.dropTable('routing_policies');
}
