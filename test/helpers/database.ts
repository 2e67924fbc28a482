// One fresh database per test file, cloned from the migrated template (DESIGN §4).
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_DATABASE_URL, TEMPLATE_DATABASE, databaseUrl } from './services';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A database cloned from the migrated template, or (`empty`) one that was never migrated. */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `agentry_t_${randomBytes(6).toString('hex')}`;
  const template = options.empty ? '' : ` TEMPLATE ${TEMPLATE_DATABASE}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}${template}`));
  return {
    name,
    url: databaseUrl(name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
