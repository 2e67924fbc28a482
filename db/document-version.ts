// A document version as the stores read it (SPEC §5, DOC-1, DOC-2): its row's columns and the
// shape clients see, where `id` is the document's id and `versionId` the row's.

type DocumentStatus = 'pending' | 'processing' | 'ready' | 'failed';

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

/** A version row: the version's fields under the same names, its own id and its document's. */
export type VersionRow = Record<string, unknown> &
  Omit<DocumentVersion, 'versionId' | 'id'> & { id: string; document_id: string };

export const VERSION_COLUMNS = [
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

export const toVersion = (r: VersionRow): DocumentVersion => ({
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
