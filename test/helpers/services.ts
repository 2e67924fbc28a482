// Where the real services of the test run are, and the names this run uses in them.
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const ADMIN_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEMPORAL_ADDRESS = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
// AGENTRY_TEST_RUN names a run, so that test runs of several checkouts or people on one machine
// use their own template database and state directory.
// A name outside [a-z0-9_-]{1,20} is refused rather than silently sharing the default names.
const RUN = (process.env.AGENTRY_TEST_RUN ?? '').replace(/-/g, '_');
if (RUN && !/^[a-z0-9_]{1,20}$/.test(RUN))
  throw new Error(`AGENTRY_TEST_RUN must be 1-20 of [a-z0-9_-]: ${process.env.AGENTRY_TEST_RUN}`);
export const TEMPLATE_DATABASE = RUN ? `agentry_test_template_${RUN}` : 'agentry_test_template';
export const STATE_DIR = path.join(ROOT, RUN ? `.jest-cache-${RUN}` : '.jest-cache');
export const WORKFLOW_BUNDLE = path.join(STATE_DIR, 'workflow-bundle.js');
export const TEMPORAL_PID_FILE = path.join(STATE_DIR, 'temporal.pid');

/** A connection string for another database on the same server. */
export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
