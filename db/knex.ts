// The knex instance and migrations. Migrations are imported modules (not files found at run
// time), so the same list works from TypeScript sources, jest and the compiled dist/.
import knex from 'knex';
import type { Knex } from 'knex';
import pg from 'pg';
import { connectionProblem, type ConnectionProblem } from '../infra/connection-errors';
import * as foundation from './migrations/001-foundation';
import * as knowledge from './migrations/002-knowledge';
import * as agents from './migrations/003-agents';
import * as prompts from './migrations/004-prompts';
import * as chains from './migrations/005-chains';
import * as indexParameters from './migrations/006-index-parameters';
import * as documentBatches from './migrations/007-document-batches';
import * as resumableLlms from './migrations/008-resumable-llms';
import * as keyedLexemes from './migrations/009-keyed-lexemes';
import * as responses from './migrations/010-responses';

export type { Knex };

// int8 (counts) as numbers; they stay far below 2^53 here.
pg.types.setTypeParser(20, (v) => Number(v));

const migrations: Record<string, Knex.Migration> = {
  '001-foundation': foundation,
  '002-knowledge': knowledge,
  '003-agents': agents,
  '004-prompts': prompts,
  '005-chains': chains,
  '006-index-parameters': indexParameters,
  '007-document-batches': documentBatches,
  '008-resumable-llms': resumableLlms,
  '009-keyed-lexemes': keyedLexemes,
  '010-responses': responses,
};

const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name]!,
};

/** What every pooled connection's session holds from the start (SR-5 search settings). */
export interface SessionSettings {
  /** `hnsw.ef_search`; vector searches also scan iteratively (`relaxed_order`). */
  efSearch: number;
}

export function createKnex(connectionString: string, poolMax: number, session?: SessionSettings): Knex {
  // Settings given to the session once, when a connection opens, so that a search needs no
  // transaction of its own to set them (one round trip instead of four; db/fragment-store.ts).
  const afterCreate = session
    ? (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void): void => {
        const ef = Math.trunc(session.efSearch);
        conn.query(
          `SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = ${ef}`,
          (err: Error | null) => done(err, conn),
        );
      }
    : undefined;
  const db = knex({
    client: 'pg',
    connection: { connectionString },
    pool: { min: 0, max: poolMax, ...(afterCreate ? { afterCreate } : {}) },
    acquireConnectionTimeout: 10_000,
    // A failing statement's message holds its SQL, never the values bound to it (content).
    compileSqlOnError: false,
  });
  db.on('query-error', (err: unknown, query: { sql?: unknown }) => nameStatement(err, query.sql));
  return db;
}

/**
 * Names the statement a database error came from (`update fragments`), for its log line
 * (infra/logger.ts): the error's message and fields are not logged, since PostgreSQL quotes
 * values in them (an input it could not read, a row's columns, the parameters of a failed
 * statement when `log_parameter_max_length_on_error` is set).
 */
function nameStatement(err: unknown, sql: unknown): void {
  if (err === null || typeof err !== 'object' || typeof sql !== 'string') return;
  const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toLowerCase() ?? 'statement';
  const relation = /\b(?:from|into|update|join)\s+"?([A-Za-z_]\w*)/i.exec(sql)?.[1];
  Object.defineProperty(err, 'statement', {
    value: relation ? `${verb} ${relation}` : verb,
    enumerable: false,
    configurable: true,
  });
}

export async function migrate(db: Knex): Promise<void> {
  await db.migrate.latest({ migrationSource });
}

/** What to fix in DATABASE_URL, by the kind of failure at start (pg errors never quote the URL). */
const START_PROBLEMS: Record<ConnectionProblem, string> = {
  certificate: "TLS: the server certificate was not accepted (the URL's sslrootcert and host)",
  credentials: 'the server refused the user or password',
  unreachable: 'unreachable',
};

/** PostgreSQL's own refusals at start that are not a connection failure. */
function serverRefusal(e: { code?: unknown; message: string }): string | undefined {
  if (/does not support SSL/i.test(e.message))
    return 'the URL asks for TLS (sslmode) but the server does not offer it';
  if (e.code === '3D000') return 'the database does not exist';
  return undefined;
}

/** The first use of the database failed: an error naming DATABASE_URL and what to fix, if it can tell. */
export function databaseStartError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const kind = connectionProblem(err);
  const known = kind ? START_PROBLEMS[kind] : serverRefusal(err);
  return known ? new Error(`DATABASE_URL: ${known}: ${err.message}`) : err;
}
