// A replica started with AGENTRY_MIGRATE_ON_START=false never migrates (issue 36: the migrations
// run once, as their own command, before pods roll); it only checks that the schema is current,
// so that a replica started before the migration job finished says what is wrong instead of
// failing on its first query. The migrations are the modules of db/migrations/ (db/knex.ts
// registers each under its file name, which knex records in `knex_migrations`).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from './knex';

const MIGRATION_FILE = /^(\d{3}-[a-z0-9-]+)\.(?:js|ts)$/;

/** The migrations of this build, by name, in order. */
export function migrationNames(): string[] {
  const names = readdirSync(path.join(__dirname, 'migrations'))
    .map((file) => MIGRATION_FILE.exec(file)?.[1])
    .filter((name): name is string => name !== undefined);
  return [...new Set(names)].sort();
}

/** The migrations of this build the database has not run. */
export async function pendingMigrations(db: Knex): Promise<string[]> {
  const done = (await db.schema.hasTable('knex_migrations'))
    ? new Set((await db('knex_migrations').select<{ name: string }[]>('name')).map((r) => r.name))
    : new Set<string>();
  return migrationNames().filter((name) => !done.has(name));
}

/** Throws, naming the command that fixes it, unless every migration of this build has run. */
export async function requireMigrated(db: Knex): Promise<void> {
  const pending = await pendingMigrations(db);
  if (pending.length > 0)
    throw new Error(
      `The database schema is behind this build (${pending.length} migration(s) not run: ${pending.join(', ')}) and AGENTRY_MIGRATE_ON_START is false: run the migrations first (node dist/migrate.js; the Helm chart's migration Job)`,
    );
}
