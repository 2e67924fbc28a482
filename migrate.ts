// Composition root of the migration command (`node dist/migrate.js`, `npm run migrate`): runs the
// database migrations once and exits, so that a deployment can migrate before its replicas roll
// (the Helm chart's pre-install/pre-upgrade Job) and start those with AGENTRY_MIGRATE_ON_START=false.
// knex takes a lock for the run, so two at once do not race.
import { createKnex, databaseStartError, migrate } from './db/knex';
import { pendingMigrations } from './db/migration-status';
import { ConfigError, loadConfig } from './infra/config';
import { createLogger } from './infra/logger';

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl)
    throw new ConfigError(['DATABASE_URL is required (postgres://user:pass@host:5432/db)']);
  const logger = createLogger(config.logLevel);
  const db = createKnex(config.databaseUrl, 1);
  try {
    const pending = await pendingMigrations(db);
    await migrate(db);
    logger.info(
      { applied: pending },
      pending.length > 0 ? 'database migrated' : 'database schema already current',
    );
  } catch (err) {
    throw databaseStartError(err);
  } finally {
    await db.destroy();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
