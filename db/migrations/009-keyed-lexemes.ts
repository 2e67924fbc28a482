// Issue 29 item 8: fragments' lexemes are stored keyed (db/keyed-lexemes.ts). Rows written before
// hold the words, and SQL cannot key them (their texts are encrypted and the key is the
// application's), so this queues them; db/lexeme-reindex.ts keys them when a process starts.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('lexeme_reindex', (t) => {
    t.uuid('fragment_id').primary();
  });
  await knex.raw(
    `INSERT INTO lexeme_reindex (fragment_id)
     SELECT id FROM fragments WHERE tsv IS NOT NULL UNION SELECT id FROM fragment_staging WHERE tsv IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('lexeme_reindex');
}
