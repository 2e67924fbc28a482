// Agents (SPEC §8) with their versions (AG-11): the current definition on `agents`, every
// definition (the current one included) in `agent_versions`.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agents', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable().unique();
    t.text('description');
    t.jsonb('prompt').notNullable();
    t.jsonb('placeholders').notNullable();
    t.jsonb('metadata').notNullable();
    t.jsonb('tools').notNullable();
    t.integer('version').notNullable();
    t.uuid('owner_key_id');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
  });
  await knex.schema.createTable('agent_versions', (t) => {
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.jsonb('definition').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.primary(['agent_id', 'version']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('agent_versions');
  await knex.schema.dropTable('agents');
}
