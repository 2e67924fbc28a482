// DOC-2 applied: versions that finish ingesting become ready in one transaction, with every
// version of their documents locked, as domain/version-supersession.ts decides (the store's
// finishing steps pass the statement that writes their fragments).
import type { Knex } from 'knex';
import { supersede } from '../domain/version-supersession';

/**
 * DOC-2 for a group of versions, in one transaction: every version of their documents is locked,
 * the previous current versions (and their fragments) expire, `insert` writes the new fragments
 * (already expired for a version a newer ready one supersedes, `expiredIds`) and the versions
 * become ready. Versions already ready are left alone (a retry is a no-op).
 */
export async function completeVersions(
  db: Knex,
  versionIds: string[],
  insert: (trx: Knex.Transaction, expiredIds: string[], now: Date) => Promise<void>,
): Promise<void> {
  if (versionIds.length === 0) return;
  await db.transaction(async (trx) => {
    const documentIds = (
      await trx('document_versions').whereIn('id', versionIds).distinct('document_id')
    ).map((r) => r.document_id as string);
    // Versions of one document are finished one transaction at a time (in one order: no deadlock).
    const all = (await trx('document_versions')
      .whereIn('document_id', documentIds)
      .orderBy('id')
      .forUpdate()
      .select('id', 'document_id', 'version', 'status', 'expired_at')) as {
      id: string;
      document_id: string;
      version: string;
      status: string;
      expired_at: Date | null;
    }[];
    const { current, superseded, expiring } = supersede(
      all.map((v) => ({
        id: v.id,
        documentId: v.document_id,
        version: Number(v.version),
        ready: v.status === 'ready',
        expired: v.expired_at !== null,
      })),
      new Set(versionIds),
    );
    if (current.length === 0 && superseded.length === 0) return;
    const now = new Date();
    if (expiring.length > 0) {
      await trx('document_versions').whereIn('id', expiring).update({ expired_at: now, updated_at: now });
      await trx('fragments')
        .whereIn('document_version_id', expiring)
        .whereNull('expired_at')
        .update({ expired_at: now });
    }
    await insert(trx, superseded, now);
    const ready = { status: 'ready', error: null, updated_at: now };
    if (current.length > 0) await trx('document_versions').whereIn('id', current).update(ready);
    if (superseded.length > 0)
      await trx('document_versions')
        .whereIn('id', superseded)
        .update({ ...ready, expired_at: now });
  });
}
