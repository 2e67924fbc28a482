// Documents and their versions as clients see them (SPEC §5, DOC-1): a document id is stable
// across versions and each POST creates a version row; listing, expiry (DELETE) and the current
// version's fragments. The ingestion of a version is db/ingestion-store.ts.
import type { Knex } from 'knex';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { KeyRing } from '../infra/crypto';
import { newId } from '../infra/ids';
import { KeyedLexemes } from './keyed-lexemes';
import { toVersion, VERSION_COLUMNS, type DocumentVersion, type VersionRow } from './document-version';
import { listPage } from './list-query';

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

export interface NewDocument {
  pipelineId: string;
  externalId: string | null;
  classification: string;
  metadata: Record<string, unknown>;
  content: string;
  textSplitterId: string;
}

/** Microseconds since the epoch (DOC-2), strictly increasing within this process. */
let lastVersion = 0;
function nextVersion(): number {
  const now = Date.now() * 1000;
  lastVersion = Math.max(now, lastVersion + 1);
  return lastVersion;
}

/** A `documents:batch` request's documents, ingested together (issue 15). */
interface DocumentBatch {
  id: string;
  pipeline_id: string;
  /** `done` once every document is ready or failed. */
  status: 'processing' | 'done';
  documents: { total: number; pending: number; processing: number; ready: number; failed: number };
  /** Fragments stored of those of the documents split so far (a document's count is known once split). */
  fragments: { done: number; total: number };
  created_at: Date;
}

/** Rows per INSERT statement (PostgreSQL takes at most 65,535 bind parameters in one). */
const INSERT_CHUNK = 500;

export class DocumentStore {
  constructor(
    private readonly db: Knex,
    private readonly keyring: KeyRing,
    /** The keyed lexemes of fragments' full-text search (db/keyed-lexemes.ts). */
    readonly lexemes = new KeyedLexemes(db, keyring),
  ) {}

  /** Stores a new version with its encrypted content (status pending). */
  /**
   * Stores new versions, in one transaction and a few statements however many there are. A
   * document whose `external_id` exists in its pipeline gets a new version under the same document
   * id (DOC-2), as does a repeated `external_id` within `docs`; with `batchId` the versions belong
   * to that new batch of the pipeline.
   */
  async createVersions(docs: NewDocument[], batchId?: string): Promise<DocumentVersion[]> {
    return this.db.transaction(async (trx) => {
      const now = new Date();
      if (batchId)
        await trx('document_batches').insert({
          id: batchId,
          pipeline_id: docs[0]!.pipelineId,
          document_count: docs.length,
          created_at: now,
        });
      const keyOf = (d: { pipelineId: string; externalId: string | null }) =>
        `${d.pipelineId}:${d.externalId}`;
      const keyed = docs.filter((d) => d.externalId !== null);
      // Serialise versions of one external id (two concurrent POSTs get distinct versions); the
      // keys are locked in one order so that two batches sharing keys cannot deadlock.
      const keys = [...new Set(keyed.map(keyOf))].sort();
      if (keys.length > 0)
        await trx.raw('SELECT count(pg_advisory_xact_lock(hashtext(k))) FROM unnest(?::text[]) AS k', [keys]);
      const latest = new Map<string, { documentId: string; version: number }>();
      for (const pipelineId of new Set(keyed.map((d) => d.pipelineId))) {
        const rows = (await trx('document_versions')
          .distinctOn('external_id')
          .where({ pipeline_id: pipelineId })
          .whereIn('external_id', [
            ...new Set(keyed.filter((d) => d.pipelineId === pipelineId).map((d) => d.externalId!)),
          ])
          .orderBy([{ column: 'external_id' }, { column: 'version', order: 'desc' }])
          .select('external_id', 'document_id', 'version')) as {
          external_id: string;
          document_id: string;
          version: string;
        }[];
        for (const r of rows)
          latest.set(keyOf({ pipelineId, externalId: r.external_id }), {
            documentId: r.document_id,
            version: Number(r.version),
          });
      }
      const rows = docs.map((doc) => {
        let documentId = newId();
        let version = nextVersion();
        if (doc.externalId !== null) {
          const existing = latest.get(keyOf(doc));
          if (existing) {
            documentId = existing.documentId;
            version = Math.max(version, existing.version + 1);
          }
          latest.set(keyOf(doc), { documentId, version });
        }
        return {
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
          batch_id: batchId ?? null,
          created_at: now,
          updated_at: now,
        };
      });
      const stored = new Map<string, DocumentVersion>();
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        const inserted = (await trx('document_versions')
          .insert(rows.slice(i, i + INSERT_CHUNK))
          .returning(VERSION_COLUMNS)) as VersionRow[];
        for (const r of inserted) stored.set(r.id, toVersion(r));
      }
      return rows.map((r) => stored.get(r.id)!);
    });
  }

  /**
   * A batch's progress, from its versions: documents by status and fragments done (in ready
   * versions, or staged with their embedding) of the fragments of the documents split so far.
   */
  async batch(pipelineId: string, batchId: string): Promise<DocumentBatch | null> {
    const row = (
      await this.db.raw(
        `SELECT b.id, b.pipeline_id, b.document_count, b.created_at,
           count(*) FILTER (WHERE v.status = 'pending')::int AS pending,
           count(*) FILTER (WHERE v.status = 'processing')::int AS processing,
           count(*) FILTER (WHERE v.status = 'ready')::int AS ready,
           count(*) FILTER (WHERE v.status = 'failed')::int AS failed,
           coalesce(sum(v.fragment_count) FILTER (WHERE v.status <> 'failed'), 0)::int AS fragments_total,
           coalesce(sum(v.fragment_count) FILTER (WHERE v.status = 'ready'), 0)::int
             + (SELECT count(*) FROM fragment_staging s JOIN document_versions sv ON sv.id = s.document_version_id
                WHERE sv.batch_id = b.id AND sv.status = 'processing' AND s.embedding IS NOT NULL)::int AS fragments_done
         FROM document_batches b LEFT JOIN document_versions v ON v.batch_id = b.id
         WHERE b.id = ? AND b.pipeline_id = ?
         GROUP BY b.id`,
        [batchId, pipelineId],
      )
    ).rows[0] as Record<string, number | string | Date> | undefined;
    if (!row) return null;
    const documents = {
      total: row.document_count as number,
      pending: row.pending as number,
      processing: row.processing as number,
      ready: row.ready as number,
      failed: row.failed as number,
    };
    return {
      id: row.id as string,
      pipeline_id: row.pipeline_id as string,
      status: documents.ready + documents.failed === documents.total ? 'done' : 'processing',
      documents,
      fragments: { done: row.fragments_done as number, total: row.fragments_total as number },
      created_at: row.created_at as Date,
    };
  }

  /** The document as clients see it: its latest version, unless the document was deleted. */
  async get(pipelineId: string, documentId: string): Promise<DocumentVersion | null> {
    const row = (await this.db('document_versions')
      .where({ pipeline_id: pipelineId, document_id: documentId })
      .orderBy('version', 'desc')
      .first(VERSION_COLUMNS)) as VersionRow | undefined;
    return row && !(row.status === 'ready' && row.expired_at) ? toVersion(row) : null;
  }

  async versions(pipelineId: string, documentId: string): Promise<DocumentVersion[]> {
    const rows = (await this.db('document_versions')
      .where({ pipeline_id: pipelineId, document_id: documentId })
      .orderBy('version', 'asc')
      .select(VERSION_COLUMNS)) as VersionRow[];
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
    return listPage<VersionRow, DocumentVersion>(
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
