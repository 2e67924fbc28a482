// Issue 27: an LLM in resumable mode has its model calls created as background responses, so that a
// retried attempt resumes the provider's stream instead of asking the model again.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE llms ADD COLUMN resumable boolean NOT NULL DEFAULT false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE llms DROP COLUMN resumable');
}
