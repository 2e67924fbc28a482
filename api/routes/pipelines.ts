// /pipelines (SPEC §4): CRUD with the classification hierarchy (CL-1) and metadata schema (MD-1).
import { Router } from 'express';
import type { EmbeddingModelStore } from '../../db/embedding-model-store';
import {
  PIPELINE_FIELDS,
  missingReference,
  type Pipeline,
  type PipelinePatch,
  type PipelineStore,
} from '../../db/pipeline-store';
import type { TextSplitterStore } from '../../db/text-splitter-store';
import { buildClosure } from '../../domain/classifications';
import { InvalidInput } from '../../domain/errors';
import { parseListQuery } from '../../domain/list-params';
import { can, type Principal } from '../../domain/permissions';
import { isUuid, newId } from '../../infra/ids';
import { loadAuthorized, requireCreate } from '../access';
import { principalOf } from '../auth';
import { checkMetadataSchema } from '../metadata-schema';
import type { RouteRegistry } from '../route-registry';
import { LIST_QUERY, listEnvelopeSchema } from '../schemas/common';
import { createPipelineSchema, updatePipelineSchema, type PipelineBody } from '../schemas/knowledge';

interface PipelineRouteDeps {
  pipelines: PipelineStore;
  embeddingModels: EmbeddingModelStore;
  textSplitters: TextSplitterStore;
}

const presentPipeline = (p: Pipeline) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  embedding_model_id: p.embedding_model_id,
  text_splitter_id: p.text_splitter_id,
  classifications: p.classifications,
  metadata_schema: p.metadata_schema,
  text_search_config: p.text_search_config,
  created_at: p.created_at.toISOString(),
  updated_at: p.updated_at.toISOString(),
});

const pipelineSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    embedding_model_id: { type: 'string' },
    text_splitter_id: { type: 'string' },
    classifications: { type: 'array' },
    metadata_schema: { type: ['object', 'null'] },
    text_search_config: { type: 'string' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
} as const;

/** A referenced embedding model or splitter must exist and be readable by the key (else 400). */
async function checkReference(
  principal: Principal,
  field: string,
  id: string,
  type: 'embedding_models' | 'text_splitters',
  load: (id: string) => Promise<{ id: string; ownerKeyId: string | null } | null>,
): Promise<void> {
  const object = isUuid(id) ? await load(id.toLowerCase()) : null;
  if (!object || !can(principal, 'read', type, object)) throw missingReference(field, id);
}

export function pipelineRoutes(routes: RouteRegistry, deps: PipelineRouteDeps): Router {
  const router = Router();
  const load = (id: unknown, principal: Principal, action: 'read' | 'write') =>
    loadAuthorized(principal, action, 'pipelines', 'Pipeline', id, (pid) => deps.pipelines.get(pid));
  const checkEmbeddingModel = (principal: Principal, id: string) =>
    checkReference(principal, 'embedding_model_id', id, 'embedding_models', (mid) =>
      deps.embeddingModels.get(mid),
    );
  const checkSplitter = (principal: Principal, id: string) =>
    checkReference(principal, 'text_splitter_id', id, 'text_splitters', (sid) => deps.textSplitters.get(sid));

  routes.add<PipelineBody>(
    router,
    {
      method: 'post',
      path: '/pipelines',
      summary: 'Create a pipeline',
      tag: 'Pipelines',
      permission: 'write:pipelines',
      body: createPipelineSchema,
      success: { status: 201, description: 'The pipeline', schema: pipelineSchema },
      errors: [400, 401, 403, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      requireCreate(principal, 'pipelines', 'pipeline');
      const body = req.body;
      await checkEmbeddingModel(principal, body.embedding_model_id);
      await checkSplitter(principal, body.text_splitter_id);
      const closure = buildClosure(body.classifications);
      if (body.metadata_schema) checkMetadataSchema(body.metadata_schema);
      const config = body.text_search_config ?? 'simple';
      if (!(await deps.pipelines.isTextSearchConfig(config))) {
        throw new InvalidInput(`text_search_config names no PostgreSQL text search configuration: ${config}`);
      }
      const pipeline = await deps.pipelines.create({
        id: newId(),
        name: body.name,
        description: body.description ?? null,
        embedding_model_id: body.embedding_model_id.toLowerCase(),
        text_splitter_id: body.text_splitter_id.toLowerCase(),
        classifications: body.classifications,
        closure,
        metadata_schema: body.metadata_schema ?? null,
        text_search_config: config,
        ownerKeyId: principal.keyId,
      });
      res.status(201).json(presentPipeline(pipeline));
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/pipelines',
      summary: 'List pipelines the caller can read',
      tag: 'Pipelines',
      query: LIST_QUERY,
      success: { status: 200, description: 'List envelope', schema: listEnvelopeSchema(pipelineSchema) },
      errors: [400, 401],
    },
    async (req, res) => {
      const page = await deps.pipelines.list(principalOf(req), parseListQuery(req.query, PIPELINE_FIELDS));
      res.json({ ...page, data: page.data.map(presentPipeline) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/pipelines/:id',
      summary: 'Get a pipeline',
      tag: 'Pipelines',
      permission: 'read:pipelines',
      success: { status: 200, description: 'The pipeline', schema: pipelineSchema },
      errors: [401, 404],
    },
    async (req, res) => {
      res.json(presentPipeline(await load(req.params.id, principalOf(req), 'read')));
    },
  );

  routes.add<Partial<PipelineBody>>(
    router,
    {
      method: 'patch',
      path: '/pipelines/:id',
      summary: 'Update a pipeline (409 for an embedding model change once documents exist)',
      tag: 'Pipelines',
      permission: 'write:pipelines',
      body: updatePipelineSchema,
      success: { status: 200, description: 'The pipeline', schema: pipelineSchema },
      errors: [400, 401, 403, 404, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const pipeline = await load(req.params.id, principal, 'write');
      const body = req.body;
      if (body.name === null) throw new InvalidInput('name cannot be null');
      const patch: PipelinePatch = {};
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.embedding_model_id !== undefined) {
        await checkEmbeddingModel(principal, body.embedding_model_id);
        patch.embedding_model_id = body.embedding_model_id.toLowerCase();
      }
      if (body.text_splitter_id !== undefined) {
        await checkSplitter(principal, body.text_splitter_id);
        patch.text_splitter_id = body.text_splitter_id.toLowerCase();
      }
      if (body.classifications !== undefined) {
        patch.closure = buildClosure(body.classifications);
        patch.classifications = body.classifications;
      }
      if (body.metadata_schema !== undefined) {
        if (body.metadata_schema !== null) checkMetadataSchema(body.metadata_schema);
        patch.metadata_schema = body.metadata_schema;
      }
      res.json(presentPipeline(await deps.pipelines.update(pipeline.id, patch)));
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/pipelines/:id',
      summary: 'Delete a pipeline with its documents and fragments',
      tag: 'Pipelines',
      permission: 'write:pipelines',
      success: { status: 204, description: 'Deleted' },
      errors: [401, 403, 404],
    },
    async (req, res) => {
      const pipeline = await load(req.params.id, principalOf(req), 'write');
      await deps.pipelines.delete(pipeline.id);
      res.status(204).end();
    },
  );
  return router;
}
