// Keys the lexemes of fragments written before they were stored keyed (queued by migration 008):
// each process runs it at start, in batches that lock their queue rows (SKIP LOCKED), so an api
// and a worker starting together share the work. A fragment's lexemes are computed again from its
// decrypted text, so a batch done twice (a crash before its commit) gives the same vectors.
//
// A fragment whose text cannot be decrypted (written under a secret no longer configured, or
// damaged) cannot be keyed: it leaves the queue with its plain lexemes dropped (no words at rest;
// full text could not find it anyway, its lexemes being plain), is counted and logged by its id,
// and the batch goes on. Kept in the queue, it would fail its batch on every start (issue 33).
import type { Knex } from 'knex';
import { DecryptionError, type KeyRing } from '../infra/crypto';
import type { Logger } from '../infra/logger';
import type { KeyedLexemes } from './keyed-lexemes';

const TABLES = ['fragments', 'fragment_staging'] as const;

interface Queued {
  table: (typeof TABLES)[number];
  id: string;
  text_cipher: Buffer;
  config: string;
}

export type Unreadable = Pick<Queued, 'table' | 'id'>;

/** What a batch did: the queue rows it took, and the fragments it could not read. */
interface BatchResult {
  taken: number;
  unreadable: Unreadable[];
}

/** Takes up to `size` queue rows (deleted when the batch commits); their fragments' rows. */
async function takeQueued(trx: Knex.Transaction, size: number): Promise<{ ids: string[]; rows: Queued[] }> {
  const { rows: taken } = (await trx.raw(
    `DELETE FROM lexeme_reindex WHERE fragment_id IN
       (SELECT fragment_id FROM lexeme_reindex ORDER BY fragment_id LIMIT ? FOR UPDATE SKIP LOCKED)
     RETURNING fragment_id`,
    [size],
  )) as { rows: { fragment_id: string }[] };
  const ids = taken.map((r) => r.fragment_id);
  if (ids.length === 0) return { ids, rows: [] };
  const { rows } = (await trx.raw(
    `SELECT 'fragments' AS table, f.id, f.text_cipher, p.text_search_config AS config
       FROM fragments f JOIN pipelines p ON p.id = f.pipeline_id WHERE f.id = ANY(?::uuid[]) AND f.tsv IS NOT NULL
     UNION ALL
     SELECT 'fragment_staging', s.id, s.text_cipher, p.text_search_config
       FROM fragment_staging s JOIN document_versions v ON v.id = s.document_version_id
       JOIN pipelines p ON p.id = v.pipeline_id WHERE s.id = ANY(?::uuid[]) AND s.tsv IS NOT NULL`,
    [ids, ids],
  )) as { rows: Queued[] };
  return { ids, rows };
}

/** The rows' texts, and the rows whose text cannot be decrypted. */
function decryptAll(keyring: KeyRing, rows: Queued[]) {
  const readable: (Queued & { text: string })[] = [];
  const unreadable: Unreadable[] = [];
  for (const row of rows) {
    try {
      readable.push({ ...row, text: keyring.decrypt('content', row.text_cipher).toString('utf8') });
    } catch (err) {
      if (!(err instanceof DecryptionError)) throw err;
      unreadable.push({ table: row.table, id: row.id });
    }
  }
  return { readable, unreadable };
}

/** One batch: the queued fragments' (and staged fragments') vectors keyed. */
function reindexBatch(db: Knex, keyring: KeyRing, lexemes: KeyedLexemes, size: number): Promise<BatchResult> {
  return db.transaction(async (trx) => {
    const { ids, rows } = await takeQueued(trx, size);
    const { readable, unreadable } = decryptAll(keyring, rows);
    for (const table of TABLES) {
      const lost = unreadable.filter((r) => r.table === table).map((r) => r.id);
      if (lost.length > 0) await trx(table).whereIn('id', lost).update({ tsv: null });
      for (const config of new Set(readable.map((r) => r.config))) {
        const group = readable.filter((r) => r.table === table && r.config === config);
        if (group.length === 0) continue;
        const tsvs = await lexemes.vectors(config, group, trx);
        await trx.raw(
          `UPDATE ${table} t SET tsv = x.tsv FROM unnest(?::uuid[], ?::tsvector[]) AS x(id, tsv) WHERE t.id = x.id`,
          [group.map((r) => r.id), tsvs],
        );
      }
    }
    return { taken: ids.length, unreadable };
  });
}

/**
 * Keys every queued fragment's lexemes, batch by batch until none is left or `signal` aborts;
 * `skipped` hears of each fragment it could not read, once its batch committed.
 */
export async function reindexLexemes(
  db: Knex,
  keyring: KeyRing,
  lexemes: KeyedLexemes,
  signal?: AbortSignal,
  batchSize = 200,
  skipped: (fragment: Unreadable) => void = () => undefined,
): Promise<number> {
  let done = 0;
  while (!signal?.aborted) {
    const { taken, unreadable } = await reindexBatch(db, keyring, lexemes, batchSize);
    if (taken === 0) break;
    unreadable.forEach(skipped);
    done += taken;
  }
  return done;
}

/**
 * The start's re-index, in the background: each skipped fragment is counted (`unreadable`) and
 * logged by its id; a failed run is logged by its error's code (infra/logger.ts) and resumes at
 * the next start. `stop` aborts it after the batch in progress.
 */
export function startLexemeReindex(
  db: Knex,
  keyring: KeyRing,
  lexemes: KeyedLexemes,
  logger: Logger,
  unreadable: { inc(): void },
): { stop(): Promise<void> } {
  const abort = new AbortController();
  const skipped = (fragment: Unreadable): void => {
    unreadable.inc();
    logger.warn(
      { fragmentId: fragment.id, table: fragment.table },
      'fragment text cannot be decrypted: its lexemes are dropped (re-ingest its document)',
    );
  };
  const running = reindexLexemes(db, keyring, lexemes, abort.signal, undefined, skipped).then(
    (n) => void (n > 0 && logger.info({ fragments: n }, 'fragment lexemes keyed')),
    (err: unknown) => logger.warn({ err }, 'keying fragment lexemes failed; the next start resumes it'),
  );
  return {
    async stop() {
      abort.abort();
      await running;
    },
  };
}
