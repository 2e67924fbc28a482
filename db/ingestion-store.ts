// The ingestion of a document version (SPEC §5, DOC-2, DOC-3), step by step for the activities:
// its fragments are staged in `fragment_staging` (not searchable) and embedded there, then one
// transaction copies them into `fragments` and expires the previous version with its fragments.
// Every step is idempotent under activity retries: fragment ids are deterministic, staging
// ignores rows that exist, finishing is a no-op once ready.
import type { Knex } from 'knex';
import { v5 as uuidv5 } from 'uuid';
import type { KeyRing } from '../infra/crypto';
import { toVersion, VERSION_COLUMNS, type DocumentVersion, type VersionRow } from './document-store';
import { vectorParameter } from './sql-helpers';

const FRAGMENT_NAMESPACE = '3b0f7f5e-2f55-4a8c-8f0e-7a3f0b9e6c21';
const fragmentId = (versionId: string, ordinal: number): string =>
  uuidv5(`${versionId}:${ordinal}`, FRAGMENT_NAMESPACE);

export interface StagedChunk {
  ordinal: number;
  text: string;
  /** Present when the chunk was embedded before staging (the built-in embedder). */
  embedding?: number[];
}

export class IngestionStore {
  constructor(
    private readonly db: Knex,
    private readonly keyring: KeyRing,
  ) {}

  async getVersion(versionId: string): Promise<DocumentVersion | null> {
    const row = (await this.db('document_versions').where({ id: versionId }).first(VERSION_COLUMNS)) as
      VersionRow | undefined;
    return row ? toVersion(row) : null;
  }

  /** Marks the version processing and returns its decrypted content, or null if it is gone. */
  async startIngestion(versionId: string): Promise<{ version: DocumentVersion; content: string } | null> {
    const row = await this.db('document_versions')
      .where({ id: versionId })
      .first([...VERSION_COLUMNS, 'content_cipher']);
    if (!row) return null;
    if (row.status === 'pending') {
      await this.db('document_versions')
        .where({ id: versionId, status: 'pending' })
        .update({ status: 'processing', updated_at: new Date() });
      row.status = 'processing';
    }
    return {
      version: toVersion(row as VersionRow),
      content: this.keyring.decrypt('content', row.content_cipher as Buffer).toString('utf8'),
    };
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
      const rows = chunks.slice(i, i + 500).map((c) => ({
        id: fragmentId(version.versionId, c.ordinal),
        document_version_id: version.versionId,
        embedding_model_id: embeddingModelId,
        ordinal: c.ordinal,
        text_cipher: this.keyring.encrypt('content', c.text),
        embedding: c.embedding ? vectorParameter(c.embedding) : null,
        tsv: c.embedding ? this.db.raw('to_tsvector(?::regconfig, ?)', [textSearchConfig!, c.text]) : null,
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

  /** Writes embeddings and full-text lexemes (the text itself stays encrypted, SR-1). */
  async storeEmbeddings(
    textSearchConfig: string,
    items: { id: string; text: string; embedding: number[] }[],
  ): Promise<void> {
    if (items.length === 0) return;
    const values = items.map(() => '(?::uuid, ?::vector, ?)').join(', ');
    const bindings = items.flatMap((i) => [i.id, vectorParameter(i.embedding), i.text]);
    await this.db.raw(
      `UPDATE fragment_staging s SET embedding = v.e, tsv = to_tsvector(?::regconfig, v.t) FROM (VALUES ${values}) AS v(id, e, t) WHERE s.id = v.id`,
      [textSearchConfig, ...bindings],
    );
  }

  /** DOC-2: the version's fragments become current and the previous version expires, atomically. */
  async finishIngestion(versionId: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const version = await trx('document_versions')
        .where({ id: versionId })
        .forUpdate()
        .first('document_id', 'pipeline_id', 'version', 'status');
      if (!version || version.status === 'ready') return;
      const now = new Date();
      const newer = await trx('document_versions')
        .where({ document_id: version.document_id, status: 'ready' })
        .where('version', '>', version.version)
        .first('id');
      const older = trx('document_versions')
        .where({ document_id: version.document_id })
        .where('version', '<', version.version)
        .whereNull('expired_at')
        .whereIn('status', ['ready']);
      if (!newer) {
        const olderIds = (await older.clone().select('id')).map((r) => r.id as string);
        if (olderIds.length > 0) {
          await trx('document_versions').whereIn('id', olderIds).update({ expired_at: now, updated_at: now });
          await trx('fragments')
            .whereIn('document_version_id', olderIds)
            .whereNull('expired_at')
            .update({ expired_at: now });
        }
      }
      // The staged fragments enter `fragments` (and its indexes) once, already current.
      await trx.raw(
        `INSERT INTO fragments (id, document_id, document_version_id, pipeline_id, embedding_model_id,
           classification, metadata, ordinal, version, text_cipher, embedding, tsv, current, expired_at, created_at)
         SELECT s.id, v.document_id, v.id, v.pipeline_id, s.embedding_model_id, v.classification, v.metadata,
           s.ordinal, v.version, s.text_cipher, s.embedding, s.tsv, true, ?::timestamptz, ?::timestamptz
         FROM fragment_staging s JOIN document_versions v ON v.id = s.document_version_id
         WHERE s.document_version_id = ?
         ON CONFLICT (id) DO NOTHING`,
        [newer ? now : null, now, versionId],
      );
      await trx('fragment_staging').where({ document_version_id: versionId }).delete();
      await trx('document_versions')
        .where({ id: versionId })
        .update({ status: 'ready', error: null, updated_at: now, ...(newer ? { expired_at: now } : {}) });
    });
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
