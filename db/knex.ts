// The knex instance and migrations. Migrations are imported modules (not files found at run
// time), so the same list works from TypeScript sources, jest and the compiled dist/.
import knex from 'knex';
import type { Knex } from 'knex';
import pg from 'pg';
import * as foundation from './migrations/001-foundation';
import * as knowledge from './migrations/002-knowledge';
import * as agents from './migrations/003-agents';
import * as prompts from './migrations/004-prompts';
import * as chains from './migrations/005-chains';

export type { Knex };

// int8 (counts) as numbers; they stay far below 2^53 here.
pg.types.setTypeParser(20, (v) => Number(v));

const migrations: Record<string, Knex.Migration> = {
  '001-foundation': foundation,
  '002-knowledge': knowledge,
  '003-agents': agents,
  '004-prompts': prompts,
  '005-chains': chains,
};

const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name]!,
};

export function createKnex(connectionString: string, poolMax: number): Knex {
  return knex({
    client: 'pg',
    connection: { connectionString },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
  });
}

export async function migrate(db: Knex): Promise<void> {
  await db.migrate.latest({ migrationSource });
}
