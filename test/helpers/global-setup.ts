// Once per run of the integration/e2e project: a Temporal dev server (reused if one answers),
// a migrated template database cloned by every test file, and one workflow bundle.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { createKnex, migrate } from '../../db/knex';
import { buildWorkflowBundle } from '../../scripts/build-workflow-bundle';
import {
  ADMIN_DATABASE_URL,
  ROOT,
  STATE_DIR,
  TEMPLATE_DATABASE,
  TEMPORAL_ADDRESS,
  TEMPORAL_PID_FILE,
  WORKFLOW_BUNDLE,
  databaseUrl,
} from './services';

async function prepareTemplate(): Promise<string> {
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  const version = (await admin.query<{ version: string }>('select version()')).rows[0]!.version;
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  const db = createKnex(databaseUrl(TEMPLATE_DATABASE), 1);
  await migrate(db);
  const vector = (await db.raw(`select extversion from pg_extension where extname = 'vector'`)).rows[0]
    .extversion as string;
  await db.destroy();
  return `${version.split(' on ')[0]}, pgvector ${vector}`;
}

export default async function globalSetup(): Promise<void> {
  mkdirSync(STATE_DIR, { recursive: true });
  const port = TEMPORAL_ADDRESS.split(':')[1] ?? '7233';
  const pid = execFileSync(
    'bash',
    [path.join(ROOT, 'scripts/temporal-dev-server.sh'), port, path.join(STATE_DIR, 'temporal'), '--headless'],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  ).trim();
  writeFileSync(TEMPORAL_PID_FILE, pid);
  const temporalVersion = execFileSync('bash', [path.join(ROOT, 'scripts/ensure-temporal.sh')], {
    encoding: 'utf8',
  }).trim();
  const cliVersion = execFileSync(temporalVersion, ['--version'], { encoding: 'utf8' }).trim();
  const [postgres] = await Promise.all([prepareTemplate(), buildWorkflowBundle(WORKFLOW_BUNDLE)]);
  const redisVersion = execFileSync(
    'redis-cli',
    ['-u', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'info', 'server'],
    { encoding: 'utf8' },
  )
    .split('\n')
    .find((l) => l.startsWith('redis_version:'))
    ?.trim();
  console.log(
    `\nServices: ${postgres}; Redis ${redisVersion?.split(':')[1]}; ${cliVersion} at ${TEMPORAL_ADDRESS} (${pid === 'existing' ? 'reused' : 'started'})`,
  );
}
