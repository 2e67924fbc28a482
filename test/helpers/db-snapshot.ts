// A fingerprint of every table of a test database (row count and a hash of every row version),
// to prove that a rejected request changed nothing, and a wait for background work (ingestion,
// executions) to settle, so that a fingerprint taken afterwards stays valid. Tables added by later
// migrations are covered without editing this file.
//
// A row version is named by its system columns `ctid` (where it lives) and `xmin` (the transaction
// that wrote it): PostgreSQL writes a new version for every INSERT and UPDATE and removes it on
// DELETE, so the set changes with any write, and hashing it never reads (or detoasts) large
// columns such as encrypted content and vectors.
import type { Knex } from 'knex';
import { sleep } from './wait';

export type Snapshot = Record<string, { rows: number; hash: string }>;

/** Row states that background work will still change. */
const UNSETTLED = ['pending', 'processing', 'running', 'queued', 'started', 'cancelling'];

async function tables(db: Knex): Promise<{ name: string; hasStatus: boolean }[]> {
  const rows = (
    await db.raw<{ rows: { table_name: string; has_status: boolean }[] }>(
      `select t.table_name,
              exists (select 1 from information_schema.columns c
                      where c.table_schema = t.table_schema and c.table_name = t.table_name
                        and c.column_name = 'status') as has_status
         from information_schema.tables t
        where t.table_schema = current_schema() and t.table_type = 'BASE TABLE'
          and t.table_name not like 'knex\\_%'
        order by t.table_name`,
    )
  ).rows;
  return rows.map((r) => ({ name: r.table_name, hasStatus: r.has_status }));
}

export interface DatabaseProbe {
  snapshot(): Promise<Snapshot>;
  /** Rows whose status says background work is still running, per table. */
  unsettled(): Promise<Record<string, number>>;
}

export async function databaseProbe(db: Knex): Promise<DatabaseProbe> {
  const list = await tables(db);
  const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const snapshotSql = list
    .map(
      (t) =>
        `select '${t.name}' as name, count(*)::int as rows,
                md5(coalesce(string_agg(x.ctid::text || x.xmin::text, ',' order by x.ctid), '')) as hash
           from ${q(t.name)} x`,
    )
    .join(' union all ');
  const withStatus = list.filter((t) => t.hasStatus);
  const states = UNSETTLED.map((s) => `'${s}'`).join(', ');
  const unsettledSql = withStatus
    .map(
      (t) =>
        `select '${t.name}' as name, count(*)::int as n from ${q(t.name)} where status::text in (${states})`,
    )
    .join(' union all ');
  return {
    async snapshot() {
      const rows = (await db.raw<{ rows: { name: string; rows: number; hash: string }[] }>(snapshotSql)).rows;
      return Object.fromEntries(rows.map((r) => [r.name, { rows: r.rows, hash: r.hash }]));
    },
    async unsettled() {
      if (withStatus.length === 0) return {};
      const rows = (await db.raw<{ rows: { name: string; n: number }[] }>(unsettledSql)).rows;
      return Object.fromEntries(rows.filter((r) => r.n > 0).map((r) => [r.name, r.n]));
    },
  };
}

/** Tables whose rows differ between two snapshots, with their row counts before → after. */
export function snapshotDiff(before: Snapshot, after: Snapshot): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names]
    .filter((n) => before[n]?.hash !== after[n]?.hash || before[n]?.rows !== after[n]?.rows)
    .map((n) => `${n} (rows ${before[n]?.rows ?? '-'} → ${after[n]?.rows ?? '-'})`);
}

/**
 * Waits until no row is in an unsettled state and two snapshots taken `quietMs` apart agree;
 * returns the settled snapshot.
 */
export async function settle(probe: DatabaseProbe, timeoutMs = 20_000, quietMs = 40): Promise<Snapshot> {
  const until = Date.now() + timeoutMs;
  let previous: Snapshot | undefined;
  for (;;) {
    const busy = await probe.unsettled();
    if (Object.keys(busy).length === 0) {
      const current = await probe.snapshot();
      if (previous && snapshotDiff(previous, current).length === 0) return current;
      previous = current;
    } else previous = undefined;
    if (Date.now() > until)
      throw new Error(`Background work did not settle within ${timeoutMs} ms: ${JSON.stringify(busy)}`);
    await sleep(quietMs);
  }
}
