// Documents and their versions (SPEC §5, DOC-1..3). A document id is stable across versions;
// each POST creates a version row. Ingestion stages fragments in `fragment_staging` (not
// searchable), then one transaction copies them into `fragments` and expires the previous version
// with its fragments (DOC-2). Every step is idempotent under activity retries (DOC-3).
import type { Knex } from 'knex';
import { v5 as uuidv5 } from 'uuid';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { KeyRing } from '../infra/crypto';
import { newId } from '../infra/ids';
import { listPage } from './list-query';

export type DocumentStatus = 'pending' | 'processing' | 'ready' | 'failed';

export interface DocumentVersion {
  /** The version row. */
  versionId: string;
  id: string;
  pipeline_id: string;
  external_id: string | null;
  classification: string;
  metadata: Record<string, unknown>;
  version: number;
  status: DocumentStatus;
  error: string | null;
  text_splitter_id: string;
  fragment_count: number | null;
  expired_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface Row extends Record<string, unknown> {
  id: string;
  document_id: string;
  pipeline_id: string;
  external_id: string | null;
  classification: string;
  metadata: Record<string, unknown>;
  version: number;
  status: DocumentStatus;
  error: string | null;
  text_splitter_id: string;
  fragment_count: number | null;
  expired_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const VERSION_COLUMNS = [
  'id',
  'document_id',
  'pipeline_id',
  'external_id',
  'classification',
  'metadata',
  'version',
  'status',
  'error',
  'text_splitter_id',
  'fragment_count',
  'expired_at',
  'created_at',
  'updated_at',
];

const toVersion = (r: Row): DocumentVersion => ({
  versionId: r.id,
  id: r.document_id,
  pipeline_id: r.pipeline_id,
  external_id: r.external_id,
  classification: r.classification,
  metadata: r.metadata,
  version: Number(r.version),
  status: r.status,
  error: r.error,
  text_splitter_id: r.text_splitter_id,
  fragment_count: r.fragment_count,
  expired_at: r.expired_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** List fields of a document (its latest version). `id` is the document id. */
export const DOCUMENT_FIELDS: ListFields = {
  id: 'uuid',
  external_id: 'string',
  classification: 'string',
  status: 'string',
  version: 'number',
  created_at: 'timestamp',
  updated_at: 'timestamp',
};

const FRAGMENT_NAMESPACE = '3b0f7f5e-2f55-4a8c-8f0e-7a3f0b9e6c21';
export const fragmentId = (versionId: string, ordinal: number): string =>
  uuidv5(`${versionId}:${ordinal}`, FRAGMENT_NAMESPACE);

export interface NewDocument {
  pipelineId: string;
  externalId: string | null;
  classification: string;
  metadata: Record<string, unknown>;
  content: string;
  textSplitterId: string;
}

export interface StagedChunk {
  ordinal: number;
  text: string;
  /** Present when the chunk was embedded before staging (the built-in embedder). */
  embedding?: number[];
}

/**
 * pgvector's binary input format (vector_recv: int16 dimensions, int16 0, float4 × dimensions,
 * big-endian), sent as a binary parameter: a fifth of the bytes of the text form of a float64
 * array and no float parsing on the server. pgvector stores float4 anyway.
 */
export function vectorParameter(vector: number[]): Buffer {
  const buf = Buffer.allocUnsafe(4 + 4 * vector.length);
  buf.writeInt16BE(vector.length, 0);
  buf.writeInt16BE(0, 2);
  for (let i = 0; i < vector.length; i++) buf.writeFloatBE(vector[i]!, 4 + 4 * i);
  return buf;
}

/** Microseconds since the epoch (DOC-2), strictly increasing within this process. */
let lastVersion = 0;
function nextVersion(): number {
  const now = Date.now() * 1000;
  lastVersion = Math.max(now, lastVersion + 1);
  return lastVersion;
}

export class DocumentStore {
  constructor(
    private readonly db: Knex,
    private readonly keyring: KeyRing,
  ) {}

  /** Stores a new version with its encrypted content (status pending). */
  async createVersions(docs: NewDocument[]): Promise<DocumentVersion[]> {
    return this.db.transaction(async (trx) => {
      const out: DocumentVersion[] = [];
      for (const doc of docs) {
        let documentId = newId();
        let version = nextVersion();
        if (doc.externalId !== null) {
          // Serialise versions of one external id (two concurrent POSTs get distinct versions).
          await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`${doc.pipelineId}:${doc.externalId}`]);
          const existing = await trx('document_versions')
            .where({ pipeline_id: doc.pipelineId, external_id: doc.externalId })
            .orderBy('version', 'desc')
            .first('document_id', 'version');
          if (existing) {
            documentId = existing.document_id as string;
            version = Math.max(version, Number(existing.version) + 1);
          }
        }
        const now = new Date();
        const [row] = await trx('document_versions')
          .insert({
            id: newId(),
            document_id: documentId,
            pipeline_id: doc.pipelineId,
            external_id: doc.externalId,
            classification: doc.classification,
            metadata: JSON.stringify(doc.metadata),
            version,
            status: 'pending',
            content_cipher: this.keyring.encrypt('content', doc.content),
            text_splitter_id: doc.textSplitterId,
            created_at: now,
            updated_at: now,
          })
          .returning(VERSION_COLUMNS);
        out.push(toVersion(row as Row));
      }
      return out;
    });
  }

  async getVersion(versionId: string): Promise<DocumentVersion | null> {
    const row = (await this.db('document_versions').where({ id: versionId }).first(VERSION_COLUMNS)) as
      Row | undefined;
    return row ? toVersion(row) : null;
  }

  /** The document as clients see it: its latest version, unless the document was deleted. */
  async get(pipelineId: string, documentId: string): Promise<DocumentVersion | null> {
    const row = (await this.db('document_versions')
      .where({ pipeline_id: pipelineId, document_id: documentId })
      .orderBy('version', 'desc')
      .first(VERSION_COLUMNS)) as Row | undefined;
    return row && !(row.status === 'ready' && row.expired_at) ? toVersion(row) : null;
  }

  async versions(pipelineId: string, documentId: string): Promise<DocumentVersion[]> {
    const rows = (await this.db('document_versions')
      .where({ pipeline_id: pipelineId, document_id: documentId })
      .orderBy('version', 'asc')
      .select(VERSION_COLUMNS)) as Row[];
    return rows.map(toVersion);
  }

  list(pipelineId: string, req: ListRequest): Promise<ListPage<DocumentVersion>> {
    const latest = this.db('document_versions')
      .distinctOn('document_id')
      .where({ pipeline_id: pipelineId })
      .orderBy([{ column: 'document_id' }, { column: 'version', order: 'desc' }])
      .select(VERSION_COLUMNS)
      .as('d');
    const columns = Object.fromEntries(
      Object.keys(DOCUMENT_FIELDS).map((f) => [f, f === 'id' ? 'd.document_id' : `d.${f}`]),
    );
    // A listed document's `id` is its document id (cursors and filters use it); the version row
    // id travels as `version_row_id`.
    return listPage<Row, DocumentVersion>(
      () =>
        this.db
          .from(latest)
          .select('d.*', this.db.raw('d.document_id AS id'), this.db.raw('d.id AS version_row_id'))
          .whereNot((w) => w.where('d.status', 'ready').whereNotNull('d.expired_at')),
      columns,
      req,
      (row) => toVersion({ ...row, id: row.version_row_id as string }),
      ['external_id'],
    );
  }

  /** DELETE: expires the current version and its fragments (and cancels nothing else). */
  async expire(pipelineId: string, documentId: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const now = new Date();
      await trx('document_versions')
        .where({ pipeline_id: pipelineId, document_id: documentId })
        .whereNull('expired_at')
        .update({ expired_at: now });
      await trx('fragments')
        .where({ pipeline_id: pipelineId, document_id: documentId })
        .whereNull('expired_at')
        .update({ expired_at: now });
    });
  }

  // ---- ingestion steps (activities) ----

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
      version: toVersion(row as Row),
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

  /** Fragments of the document's current version, in order, texts decrypted. */
  async fragments(pipelineId: string, documentId: string): Promise<FragmentRecord[]> {
    const rows = await this.db('fragments')
      .where({ pipeline_id: pipelineId, document_id: documentId, current: true })
      .whereNull('expired_at')
      .orderBy('ordinal')
      .select(FRAGMENT_COLUMNS);
    return rows.map((r) => this.toFragment(r));
  }

  toFragment(r: Record<string, unknown>): FragmentRecord {
    return {
      id: r.id as string,
      classification: r.classification as string,
      metadata: r.metadata as Record<string, unknown>,
      document_id: r.document_id as string,
      page_content: this.keyring.decrypt('content', r.text_cipher as Buffer).toString('utf8'),
      version: Number(r.version),
      expired_at: (r.expired_at as Date | null)?.toISOString() ?? null,
    };
  }
}

export const FRAGMENT_COLUMNS = [
  'id',
  'classification',
  'metadata',
  'document_id',
  'text_cipher',
  'version',
  'expired_at',
];

/** SPEC §5 fragment shape, without score and order_id. */
export interface FragmentRecord {
  id: string;
  classification: string;
  metadata: Record<string, unknown>;
  document_id: string;
  page_content: string;
  version: number;
  expired_at: string | null;
}
