// Issue 34: responses of /v1/responses. `store` is the create's `store` (false: the content expires
// when the execution finishes, and nobody can read or continue it after), `deleted_at` the instant
// DELETE /v1/responses/{id} removed its content (the record stays for audit, SPEC §9.3).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'ALTER TABLE executions ADD COLUMN store boolean NOT NULL DEFAULT true, ADD COLUMN deleted_at timestamptz(3)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE executions DROP COLUMN store, DROP COLUMN deleted_at');
}
