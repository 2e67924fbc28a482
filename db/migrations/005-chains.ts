// CH-4: admitting a chain execution counts the chain's running executions under a lock on the
// chain row; this partial index keeps that count to the few rows it concerns.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX executions_running_chains ON executions (chain_id) WHERE kind = 'chain' AND status = 'running'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX executions_running_chains');
}
