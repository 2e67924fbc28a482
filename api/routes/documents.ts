// Documents of a pipeline (SPEC §5): adding one checks it against its pipeline, stores its content
// encrypted, answers 202 and starts its ingestion (api/start-ingestion.ts); versions, fragments and
// expiry. Search is api/routes/search.ts.
import { Router } from 'express';
import { DOCUMENT_FIELDS, type DocumentStore, type NewDocument } from '../../db/document-store';
import type { DocumentVersion } from '../../db/document-version';
import { missingReference, type Pipeline, type PipelineStore } from '../../db/pipeline-store';
import type { TextSplitterStore } from '../../db/text-splitter-store';
import { InvalidInput } from '../../domain/errors';
import type { Limits } from '../../domain/limits';
import { parseListQuery } from '../../domain/list-params';
import { can, type Principal } from '../../domain/permissions';
import { isUuid, newId } from '../../infra/ids';
import { loadAuthorized, loadById } from '../access';
import { principalOf } from '../auth';
import { validateMetadata } from '../metadata-schema';
import type { RouteRegistry } from '../route-registry';
import { LIST_QUERY, listEnvelopeSchema } from '../schemas/common';
import {
  createDocumentBatchSchema,
  createDocumentSchema,
  type DocumentBatchBody,
  type DocumentBody,
} from '../schemas/knowledge';
import { startBatchIngestion, startIngestion, type StartIngestionDeps } from '../start-ingestion';

interface DocumentRouteDeps extends StartIngestionDeps {
  documents: DocumentStore;
  pipelines: PipelineStore;
  textSplitters: TextSplitterStore;
  limits: Pick<Limits, 'documentsPerBatch'>;
}

const presentDocument = (d: DocumentVersion) => ({
  id: d.id,
  pipeline_id: d.pipeline_id,
  external_id: d.external_id,
  classification: d.classification,
  metadata: d.metadata,
  version: d.version,
  expired_at: d.expired_at?.toISOString() ?? null,
  status: d.status,
  ...(d.status === 'failed' ? { error: d.error } : {}),
  created_at: d.created_at.toISOString(),
});

const documentSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    pipeline_id: { type: 'string' },
    external_id: { type: ['string', 'null'] },
    classification: { type: 'string' },
    metadata: { type: 'object' },
    version: { type: 'integer' },
    expired_at: { type: ['string', 'null'] },
    status: { enum: ['pending', 'processing', 'ready', 'failed'] },
    error: { type: 'string' },
    created_at: { type: 'string' },
  },
} as const;

const count = { type: 'integer' } as const;
const batchSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    pipeline_id: { type: 'string' },
    status: { enum: ['processing', 'done'] },
    documents: {
      type: 'object',
      properties: { total: count, pending: count, processing: count, ready: count, failed: count },
    },
    fragments: { type: 'object', properties: { done: count, total: count } },
    created_at: { type: 'string' },
  },
} as const;

const batchPath = (pipelineId: string, batchId: string) =>
  `/pipelines/${pipelineId}/document_batches/${batchId}`;

/** Checks one document against its pipeline (400 naming the problem) and prepares it. */
async function prepareDocument(
  deps: DocumentRouteDeps,
  principal: Principal,
  pipeline: Pipeline,
  body: DocumentBody,
  path: string,
): Promise<NewDocument> {
  if (!(body.classification in pipeline.closure)) {
    throw new InvalidInput(`${path}classification: unknown classification level: ${body.classification}`);
  }
  const metadata = body.metadata ?? {};
  if (pipeline.metadata_schema)
    validateMetadata(
      `${pipeline.id}:${pipeline.updated_at.getTime()}`,
      pipeline.metadata_schema,
      metadata,
      `${path}metadata`,
    );
  let textSplitterId = pipeline.text_splitter_id;
  if (body.text_splitter_id !== undefined) {
    const splitter = isUuid(body.text_splitter_id)
      ? await deps.textSplitters.get(body.text_splitter_id.toLowerCase())
      : null;
    if (!splitter || !can(principal, 'read', 'text_splitters', splitter))
      throw missingReference(`${path}text_splitter_id`, body.text_splitter_id);
    textSplitterId = splitter.id;
  }
  return {
    pipelineId: pipeline.id,
    externalId: body.external_id ?? null,
    classification: body.classification,
    metadata,
    content: body.content,
    textSplitterId,
  };
}

export function documentRoutes(routes: RouteRegistry, deps: DocumentRouteDeps): Router {
  const router = Router();
  const pipelineFor = (id: unknown, principal: Principal, action: 'read' | 'write' | 'execute') =>
    loadAuthorized(principal, action, 'pipelines', 'Pipeline', id, (pid) => deps.pipelines.get(pid));
  const documentFor = (pipeline: Pipeline, id: unknown): Promise<DocumentVersion> =>
    loadById('Document', id, (did) => deps.documents.get(pipeline.id, did));

  routes.add<DocumentBody>(
    router,
    {
      method: 'post',
      path: '/pipelines/:id/documents',
      summary:
        'Add a document (or a new version of one with the same external_id); ingestion runs asynchronously',
      tag: 'Documents',
      permission: 'write:pipelines',
      body: createDocumentSchema,
      success: { status: 202, description: 'The document, status pending', schema: documentSchema },
      errors: [400, 401, 403, 404, 413, 503],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const pipeline = await pipelineFor(req.params.id, principal, 'write');
      const prepared = await prepareDocument(deps, principal, pipeline, req.body, '');
      const [version] = await deps.documents.createVersions([prepared]);
      await startIngestion(deps, [version!]);
      res.status(202).json(presentDocument(version!));
    },
  );

  routes.add<DocumentBatchBody>(
    router,
    {
      method: 'post',
      path: '/pipelines/:id/documents\\:batch',
      summary: `Add up to ${deps.limits.documentsPerBatch} documents in one request`,
      tag: 'Documents',
      permission: 'write:pipelines',
      body: createDocumentBatchSchema(deps.limits),
      success: {
        status: 202,
        description: '{data: [document...], batch_id}; Location: the batch, whose GET shows its progress',
        schema: {
          type: 'object',
          properties: { data: { type: 'array', items: documentSchema }, batch_id: { type: 'string' } },
        },
      },
      errors: [400, 401, 403, 404, 413, 503],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const pipeline = await pipelineFor(req.params.id, principal, 'write');
      const prepared: NewDocument[] = [];
      for (const [i, body] of req.body.documents.entries())
        prepared.push(await prepareDocument(deps, principal, pipeline, body, `documents[${i}].`));
      const batchId = newId();
      const versions = await deps.documents.createVersions(prepared, batchId);
      await startBatchIngestion(deps, batchId, versions);
      res
        .status(202)
        .location(batchPath(pipeline.id, batchId))
        .json({ data: versions.map(presentDocument), batch_id: batchId });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/pipelines/:id/document_batches/:batchId',
      summary: 'Progress of a documents:batch request: its documents by status and fragments stored',
      tag: 'Documents',
      permission: 'read:pipelines',
      success: { status: 200, description: 'The batch', schema: batchSchema },
      errors: [401, 404],
    },
    async (req, res) => {
      const pipeline = await pipelineFor(req.params.id, principalOf(req), 'read');
      const batch = await loadById('Document batch', req.params.batchId, (id) =>
        deps.documents.batch(pipeline.id, id),
      );
      res.json({ ...batch, created_at: batch.created_at.toISOString() });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/pipelines/:id/documents',
      summary: 'List documents (their latest versions)',
      tag: 'Documents',
      permission: 'read:pipelines',
      query: LIST_QUERY,
      success: { status: 200, description: 'List envelope', schema: listEnvelopeSchema(documentSchema) },
      errors: [400, 401, 404],
    },
    async (req, res) => {
      const pipeline = await pipelineFor(req.params.id, principalOf(req), 'read');
      const page = await deps.documents.list(pipeline.id, parseListQuery(req.query, DOCUMENT_FIELDS));
      res.json({ ...page, data: page.data.map(presentDocument) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/pipelines/:id/documents/:docId',
      summary: 'Get a document (its latest version)',
      tag: 'Documents',
      permission: 'read:pipelines',
      success: { status: 200, description: 'The document', schema: documentSchema },
      errors: [401, 404],
    },
    async (req, res) => {
      const pipeline = await pipelineFor(req.params.id, principalOf(req), 'read');
      res.json(presentDocument(await documentFor(pipeline, req.params.docId)));
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/pipelines/:id/documents/:docId/versions',
      summary: 'Every version of a document, oldest first',
      tag: 'Documents',
      permission: 'read:pipelines',
      success: { status: 200, description: '{data: [document...]}' },
      errors: [401, 404],
    },
    async (req, res) => {
      const pipeline = await pipelineFor(req.params.id, principalOf(req), 'read');
      const doc = await documentFor(pipeline, req.params.docId);
      res.json({ data: (await deps.documents.versions(pipeline.id, doc.id)).map(presentDocument) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/pipelines/:id/documents/:docId/fragments',
      summary: 'Fragments of the current version, in order',
      tag: 'Documents',
      permission: 'read:pipelines',
      success: { status: 200, description: '{data: [fragment...]}' },
      errors: [401, 404],
    },
    async (req, res) => {
      const pipeline = await pipelineFor(req.params.id, principalOf(req), 'read');
      const doc = await documentFor(pipeline, req.params.docId);
      res.json({ data: await deps.documents.fragments(pipeline.id, doc.id) });
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/pipelines/:id/documents/:docId',
      summary: 'Delete a document: expires its current version and fragments',
      tag: 'Documents',
      permission: 'write:pipelines',
      success: { status: 204, description: 'Deleted' },
      errors: [401, 403, 404],
    },
    async (req, res) => {
      const pipeline = await pipelineFor(req.params.id, principalOf(req), 'write');
      const doc = await documentFor(pipeline, req.params.docId);
      await deps.documents.expire(pipeline.id, doc.id);
      res.status(204).end();
    },
  );

  return router;
}
