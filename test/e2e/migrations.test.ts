// Issue 36: the migrations as their own command (`node dist/migrate.js`, the chart's hook Job),
// and replicas that never migrate (AGENTRY_MIGRATE_ON_START=false): on a database that was never
// migrated such a replica refuses to start, naming the command, and leaves the database as it
// was; after the command it starts. The command is idempotent.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { migrationNames } from '../../db/migration-status';
import { createLogger } from '../../infra/logger';
import { createRuntime } from '../../runtime';
import { testEnv } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { DIST } from '../helpers/processes';

const run = promisify(execFile);

/** The tables of the public schema, sorted. */
async function tables(url: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    );
    return rows.map((r) => r.tablename);
  } finally {
    await client.end();
  }
}

describe('issue 36: migrations as a command, replicas that never migrate', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase({ empty: true });
  });
  afterAll(() => database?.drop());

  const replica = () => {
    const { config } = testEnv(database.url, { AGENTRY_MIGRATE_ON_START: 'false' });
    return createRuntime(config, createLogger('silent'));
  };
  const migrateCommand = () =>
    run(process.execPath, [path.join(DIST, 'migrate.js')], {
      env: { ...process.env, DATABASE_URL: database.url, AGENTRY_LOG_LEVEL: 'info' },
    });

  it('a replica with migrations off refuses an unmigrated database and changes nothing in it', async () => {
    expect(migrationNames().length).toBeGreaterThanOrEqual(9);
    await expect(replica()).rejects.toThrow(
      new RegExp(
        `${migrationNames().length} migration\\(s\\) not run: 001-foundation, .*node dist/migrate\\.js`,
      ),
    );
    expect(await tables(database.url)).toEqual([]);
  });

  it('node dist/migrate.js migrates once; run again it finds the schema current', async () => {
    const first = await migrateCommand();
    expect(JSON.parse(first.stdout.trim())).toMatchObject({
      msg: 'database migrated',
      applied: migrationNames(),
    });
    expect(await tables(database.url)).toEqual(
      expect.arrayContaining(['knex_migrations', 'agents', 'executions']),
    );
    const second = await migrateCommand();
    expect(JSON.parse(second.stdout.trim())).toMatchObject({
      msg: 'database schema already current',
      applied: [],
    });
  });

  it('after the command the replica with migrations off starts', async () => {
    const rt = await replica();
    try {
      expect((await rt.db('knex_migrations').count<{ count: number }[]>('* as count'))[0]!.count).toBe(
        migrationNames().length,
      );
    } finally {
      await rt.close();
    }
  });
});
