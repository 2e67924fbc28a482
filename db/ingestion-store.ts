// The ingestion of a document version (SPEC §5, DOC-2, DOC-3), step by step for the activities:
// its fragments are staged in `fragment_staging` (not searchable) and embedded there, then one
// transaction copies them into `fragments` and expires the previous version with its fragments.
// Every step is idempotent under activity retries: fragment ids are deterministic, staging
// ignores rows that exist, finishing is a no-op once ready.
import type { Knex } from 'knex';
import { v5 as uuidv5 } from 'uuid';
import type { KeyRing } from '../infra/crypto';
import { KeyedLexemes } from './keyed-lexemes';
import { toVersion, VERSION_COLUMNS, type DocumentVersion, type VersionRow } from './document-version';
import { vectorParameter } from './sql-helpers';
import { completeVersions } from './version-completion';

const FRAGMENT_NAMESPACE = '3b0f7f5e-2f55-4a8c-8f0e-7a3f0b9e6c21';
const fragmentId = (versionId: string, ordinal: number): string =>
  uuidv5(`${versionId}:${ordinal}`, FRAGMENT_NAMESPACE);

const FRAGMENT_COLUMNS = `id, document_id, document_version_id, pipeline_id, embedding_model_id, classification,
  metadata, ordinal, version, text_cipher, embedding, tsv, current, expired_at, created_at`;

/** Fragments per INSERT (6 bind parameters each; PostgreSQL takes at most 65,535). */
const LOAD_CHUNK = 1000;

interface StagedChunk {
  ordinal: number;
  text: string;
  /** Present when the chunk was embedded before staging (the built-in embedder). */
  embedding?: number[];
}

export class IngestionStore {
  constructor(
    private readonly db: Knex,
    private readonly keyring: KeyRing,
    /** Fragments' lexemes are stored keyed (db/keyed-lexemes.ts), never as words. */
    private readonly lexemes = new KeyedLexemes(db, keyring),
  ) {}

  async getVersion(versionId: string): Promise<DocumentVersion | null> {
    const row = (await this.db('document_versions').where({ id: versionId }).first(VERSION_COLUMNS)) as
      VersionRow | undefined;
    return row ? toVersion(row) : null;
  }

  /** Marks the version processing and returns its decrypted content, or null if it is gone. */
  async startIngestion(versionId: string): Promise<{ version: DocumentVersion; content: string } | null> {
    return (await this.startIngestions([versionId]))[0] ?? null;
  }

  /** startIngestion for many versions, in the order asked; versions that are gone are left out. */
  async startIngestions(versionIds: string[]): Promise<{ version: DocumentVersion; content: string }[]> {
    // One round trip: the pending ones become processing; the SELECT sees the rows as they were.
    const rows = (
      await this.db.raw(
        `WITH started AS (
           UPDATE document_versions SET status = 'processing', updated_at = now()
           WHERE id = ANY(?::uuid[]) AND status = 'pending' RETURNING id)
         SELECT ${VERSION_COLUMNS.join(', ')}, content_cipher FROM document_versions WHERE id = ANY(?::uuid[])`,
        [versionIds, versionIds],
      )
    ).rows as (VersionRow & { content_cipher: Buffer })[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return versionIds.flatMap((id) => {
      const row = byId.get(id);
      if (!row) return [];
      if (row.status === 'pending') row.status = 'processing';
      return [
        {
          version: toVersion(row),
          content: this.keyring.decrypt('content', row.content_cipher).toString('utf8'),
        },
      ];
    });
  }

  /**
   * Stores the chunks as staged fragments, with their embeddings and lexemes when they come with
   * one (then `textSearchConfig` is needed); a retry inserts nothing twice.
   */
  async stageFragments(
    version: DocumentVersion,
    embeddingModelId: string,
    chunks: StagedChunk[],
    textSearchConfig?: string,
  ): Promise<void> {
    for (let i = 0; i < chunks.length; i += 500) {
      const slice = chunks.slice(i, i + 500);
      const tsvs = await this.lexemes.vectors(textSearchConfig!, slice.some((c) => c.embedding) ? slice : []);
      const rows = slice.map((c, n) => ({
        id: fragmentId(version.versionId, c.ordinal),
        document_version_id: version.versionId,
        embedding_model_id: embeddingModelId,
        ordinal: c.ordinal,
        text_cipher: this.keyring.encrypt('content', c.text),
        embedding: c.embedding ? vectorParameter(c.embedding) : null,
        tsv: c.embedding ? tsvs[n]! : null,
      }));
      await this.db('fragment_staging').insert(rows).onConflict(['document_version_id', 'ordinal']).ignore();
    }
    await this.db('document_versions')
      .where({ id: version.versionId })
      .update({ fragment_count: chunks.length });
  }

  /** Staged fragments of a range of ordinals that still lack an embedding, texts decrypted. */
  async unembedded(versionId: string, from: number, count: number): Promise<{ id: string; text: string }[]> {
    const rows = await this.db('fragment_staging')
      .where({ document_version_id: versionId })
      .whereBetween('ordinal', [from, from + count - 1])
      .whereNull('embedding')
      .orderBy('ordinal')
      .select('id', 'text_cipher');
    return rows.map((r) => ({
      id: r.id as string,
      text: this.keyring.decrypt('content', r.text_cipher as Buffer).toString('utf8'),
    }));
  }

  /**
   * Staged fragments of several versions that still lack an embedding, among positions
   * [from, from + count) of their fragments in (version, ordinal) order; texts decrypted.
   */
  async unembeddedOf(
    versionIds: string[],
    from: number,
    count: number,
  ): Promise<{ id: string; text: string }[]> {
    const rows = (
      await this.db.raw(
        `SELECT id, text_cipher FROM (
           SELECT id, text_cipher, embedding IS NULL AS pending FROM fragment_staging
           WHERE document_version_id = ANY(?::uuid[]) ORDER BY document_version_id, ordinal OFFSET ? LIMIT ?
         ) s WHERE pending`,
        [versionIds, from, count],
      )
    ).rows as { id: string; text_cipher: Buffer }[];
    return rows.map((r) => ({
      id: r.id,
      text: this.keyring.decrypt('content', r.text_cipher).toString('utf8'),
    }));
  }

  /** Of these versions, the ones whose staged fragments are not all embedded. */
  async withUnembedded(versionIds: string[]): Promise<string[]> {
    return (
      await this.db('fragment_staging')
        .whereIn('document_version_id', versionIds)
        .whereNull('embedding')
        .distinct('document_version_id')
    ).map((r) => r.document_version_id as string);
  }

  /** How many fragments these versions have staged, by embedding model. */
  async stagedVersions(versionIds: string[]): Promise<Map<string, number>> {
    const rows = (await this.db('fragment_staging')
      .whereIn('document_version_id', versionIds)
      .groupBy('embedding_model_id')
      .select('embedding_model_id', this.db.raw('count(*)::int AS n'))) as {
      embedding_model_id: string;
      n: number;
    }[];
    return new Map(rows.map((r) => [r.embedding_model_id, r.n]));
  }

  /** Whether batches of pipelines using the model still have versions to ingest. */
  async batchesInFlight(embeddingModelId: string): Promise<boolean> {
    const row = await this.db('document_versions as v')
      .join('pipelines as p', 'p.id', 'v.pipeline_id')
      .where('p.embedding_model_id', embeddingModelId)
      .whereNotNull('v.batch_id')
      .whereIn('v.status', ['pending', 'processing'])
      .first(this.db.raw('1'));
    return row !== undefined;
  }

  /** Writes embeddings and keyed full-text lexemes (the text itself stays encrypted, SR-1). */
  async storeEmbeddings(
    textSearchConfig: string,
    items: { id: string; text: string; embedding: number[] }[],
  ): Promise<void> {
    if (items.length === 0) return;
    const tsvs = await this.lexemes.vectors(textSearchConfig, items);
    const values = items.map(() => '(?::uuid, ?::vector, ?::tsvector)').join(', ');
    const bindings = items.flatMap((item, n) => [item.id, vectorParameter(item.embedding), tsvs[n]!]);
    await this.db.raw(
      `UPDATE fragment_staging s SET embedding = v.e, tsv = v.t FROM (VALUES ${values}) AS v(id, e, t) WHERE s.id = v.id`,
      bindings,
    );
  }

  /** DOC-2: the version's fragments become current and the previous version expires, atomically. */
  async finishIngestion(versionId: string): Promise<void> {
    await this.finishIngestions([versionId]);
  }

  /** finishIngestion for many versions whose fragments are staged, in one transaction. */
  async finishIngestions(versionIds: string[]): Promise<void> {
    await completeVersions(this.db, versionIds, async (trx, expiredIds, now) => {
      // The staged fragments enter `fragments` (and its indexes) once, already current.
      await trx.raw(
        `INSERT INTO fragments (${FRAGMENT_COLUMNS})
         SELECT s.id, v.document_id, v.id, v.pipeline_id, s.embedding_model_id, v.classification, v.metadata,
           s.ordinal, v.version, s.text_cipher, s.embedding, s.tsv, true,
           CASE WHEN v.id = ANY(?::uuid[]) THEN ?::timestamptz END, ?::timestamptz
         FROM fragment_staging s JOIN document_versions v ON v.id = s.document_version_id
         WHERE s.document_version_id = ANY(?::uuid[])
         ON CONFLICT (id) DO NOTHING`,
        [expiredIds, now, now, versionIds],
      );
      await trx('fragment_staging').whereIn('document_version_id', versionIds).delete();
    });
  }

  /**
   * Versions embedded while they were split (the built-in embedder) become ready straight from
   * their chunks, without staging: the fragments are written once, in multi-row inserts with the
   * vectors in pgvector's binary form, and DOC-2 holds as in finishIngestions.
   */
  async loadVersions(
    embeddingModelId: string,
    textSearchConfig: string,
    loads: { versionId: string; chunks: (StagedChunk & { embedding: number[] })[] }[],
  ): Promise<void> {
    const chunks = loads.flatMap((l) => l.chunks.map((c) => ({ versionId: l.versionId, ...c })));
    const tsvs = await this.lexemes.vectors(textSearchConfig, chunks);
    const rows = chunks.map((c, n) => [
      fragmentId(c.versionId, c.ordinal),
      c.versionId,
      c.ordinal,
      this.keyring.encrypt('content', c.text),
      vectorParameter(c.embedding),
      tsvs[n]!,
    ]);
    await completeVersions(
      this.db,
      loads.map((l) => l.versionId),
      async (trx, expiredIds, now) => {
        for (let i = 0; i < rows.length; i += LOAD_CHUNK) {
          const chunk = rows.slice(i, i + LOAD_CHUNK);
          await trx.raw(
            `INSERT INTO fragments (${FRAGMENT_COLUMNS})
             SELECT x.id, v.document_id, v.id, v.pipeline_id, ?::uuid, v.classification, v.metadata,
               x.ordinal, v.version, x.text_cipher, x.embedding, x.tsv, true,
               CASE WHEN v.id = ANY(?::uuid[]) THEN ?::timestamptz END, ?::timestamptz
             FROM (VALUES ${chunk.map(() => '(?::uuid, ?::uuid, ?::int, ?::bytea, ?::vector, ?::tsvector)').join(', ')})
               AS x(id, version_id, ordinal, text_cipher, embedding, tsv)
             JOIN document_versions v ON v.id = x.version_id
             ON CONFLICT (id) DO NOTHING`,
            [embeddingModelId, expiredIds, now, now, ...chunk.flat()],
          );
        }
        await trx.raw(
          'UPDATE document_versions d SET fragment_count = x.n FROM unnest(?::uuid[], ?::int[]) AS x(id, n) WHERE d.id = x.id',
          [loads.map((l) => l.versionId), loads.map((l) => l.chunks.length)],
        );
      },
    );
  }

  /** Ids of a batch's versions in their order (version, then id), `limit` from position `from`. */
  async batchVersionIds(batchId: string, from: number, limit: number): Promise<string[]> {
    return (
      await this.db('document_versions')
        .where({ batch_id: batchId })
        .orderBy([{ column: 'version' }, { column: 'id' }])
        .offset(from)
        .limit(limit)
        .select('id')
    ).map((r) => r.id as string);
  }

  /** How many documents the batch was created with. */
  async batchDocumentCount(batchId: string): Promise<number> {
    const row = await this.db('document_batches').where({ id: batchId }).first('document_count');
    return (row?.document_count as number | undefined) ?? 0;
  }

  /** Every version of the batch not yet ready or failed fails with `error` (as failIngestion). */
  async failBatch(batchId: string, error: string): Promise<void> {
    const ids = (
      await this.db('document_versions')
        .where({ batch_id: batchId })
        .whereIn('status', ['pending', 'processing'])
        .select('id')
    ).map((r) => r.id as string);
    for (const id of ids) await this.failIngestion(id, error);
  }

  /** The version failed: its staged fragments go, the previous version stays current (DOC-2). */
  async failIngestion(versionId: string, error: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx('fragment_staging').where({ document_version_id: versionId }).delete();
      await trx('fragments').where({ document_version_id: versionId, current: false }).delete();
      await trx('document_versions')
        .where({ id: versionId })
        .whereNot({ status: 'ready' })
        .update({ status: 'failed', error, updated_at: new Date() });
    });
  }
}
