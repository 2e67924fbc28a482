// Keys the lexemes of fragments written before they were stored keyed (queued by migration 008):
// each process runs it at start, in batches that lock their queue rows (SKIP LOCKED), so an api
// and a worker starting together share the work. A fragment's lexemes are computed again from its
// decrypted text, so a batch done twice (a crash before its commit) gives the same vectors.
import type { Knex } from 'knex';
import type { KeyRing } from '../infra/crypto';
import type { KeyedLexemes } from './keyed-lexemes';

interface Queued {
  table: 'fragments' | 'fragment_staging';
  id: string;
  text_cipher: Buffer;
  config: string;
}

/** One batch: the queued fragments' (and staged fragments') vectors keyed; how many were queued. */
async function reindexBatch(
  db: Knex,
  keyring: KeyRing,
  lexemes: KeyedLexemes,
  size: number,
): Promise<number> {
  return db.transaction(async (trx) => {
    const { rows: taken } = (await trx.raw(
      `DELETE FROM lexeme_reindex WHERE fragment_id IN
         (SELECT fragment_id FROM lexeme_reindex ORDER BY fragment_id LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING fragment_id`,
      [size],
    )) as { rows: { fragment_id: string }[] };
    const ids = taken.map((r) => r.fragment_id);
    if (ids.length === 0) return 0;
    const { rows } = (await trx.raw(
      `SELECT 'fragments' AS table, f.id, f.text_cipher, p.text_search_config AS config
         FROM fragments f JOIN pipelines p ON p.id = f.pipeline_id WHERE f.id = ANY(?::uuid[]) AND f.tsv IS NOT NULL
       UNION ALL
       SELECT 'fragment_staging', s.id, s.text_cipher, p.text_search_config
         FROM fragment_staging s JOIN document_versions v ON v.id = s.document_version_id
         JOIN pipelines p ON p.id = v.pipeline_id WHERE s.id = ANY(?::uuid[]) AND s.tsv IS NOT NULL`,
      [ids, ids],
    )) as { rows: Queued[] };
    for (const table of ['fragments', 'fragment_staging'] as const)
      for (const config of new Set(rows.map((r) => r.config))) {
        const group = rows.filter((r) => r.table === table && r.config === config);
        if (group.length === 0) continue;
        const texts = group.map((r) => ({
          text: keyring.decrypt('content', r.text_cipher).toString('utf8'),
        }));
        const tsvs = await lexemes.vectors(config, texts, trx);
        await trx.raw(
          `UPDATE ${table} t SET tsv = x.tsv FROM unnest(?::uuid[], ?::tsvector[]) AS x(id, tsv) WHERE t.id = x.id`,
          [group.map((r) => r.id), tsvs],
        );
      }
    return ids.length;
  });
}

/** Keys every queued fragment's lexemes, batch by batch until none is left or `signal` aborts. */
export async function reindexLexemes(
  db: Knex,
  keyring: KeyRing,
  lexemes: KeyedLexemes,
  signal?: AbortSignal,
  batchSize = 200,
): Promise<number> {
  let done = 0;
  while (!signal?.aborted) {
    const n = await reindexBatch(db, keyring, lexemes, batchSize);
    if (n === 0) break;
    done += n;
  }
  return done;
}
