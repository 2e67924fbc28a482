// /embedding_providers and /embedding_models (SPEC §3).
import type { Client } from '@temporalio/client';
import { Router } from 'express';
import type { EmbeddingModelLookup } from '../../db/embedding-model-lookup';
import {
  EMBEDDING_MODEL_FIELDS,
  type EmbeddingModel,
  type EmbeddingModelStore,
} from '../../db/embedding-model-store';
import { DEFAULT_HNSW, type HnswParameters, type VectorIndexStore } from '../../db/vector-index';
import { InvalidInput, Unavailable } from '../../domain/errors';
import { parseListQuery } from '../../domain/list-params';
import type { Principal } from '../../domain/permissions';
import { newId } from '../../infra/ids';
import { vectorIndexWorkflowId } from '../../workflows/contracts';
import { loadAuthorized, requireCreate } from '../access';
import { principalOf } from '../auth';
import type { RouteRegistry } from '../route-registry';
import { LIST_QUERY, listEnvelopeSchema } from '../schemas/common';
import {
  createEmbeddingModelSchema,
  hashParametersSchema,
  openAiParametersSchema,
  updateEmbeddingModelSchema,
  type CreateEmbeddingModelBody,
  type OpenAiParameters,
  type UpdateEmbeddingModelBody,
} from '../schemas/knowledge';
import { validate } from '../validation';

const EMBEDDING_PROVIDERS = [
  {
    id: 'hash',
    provider: 'hash',
    description:
      'Built in, deterministic: feature hashing of word unigrams and bigrams, L2-normalised. No download.',
  },
  {
    id: 'openai',
    provider: 'openai',
    description:
      'Any OpenAI-compatible /embeddings endpoint (OpenAI, vLLM, Ollama, TEI). Parameters: endpoint, model, api_key, batch_size.',
  },
];

const DEFAULT_BATCH_SIZE = 64;

/**
 * The index's build parameters: DEFAULT_HNSW unless given (its ef_construction is at least
 * 2 × the largest m); pgvector refuses an `ef_construction` below 2·m.
 */
function hnswParameters(
  index: CreateEmbeddingModelBody['index'],
  base: HnswParameters = DEFAULT_HNSW,
): HnswParameters {
  const m = index?.m ?? base.m;
  const efConstruction = index?.ef_construction ?? base.efConstruction;
  if (efConstruction < 2 * m) {
    const message = `index.ef_construction (${efConstruction}) must be at least 2 × index.m (${2 * m})`;
    throw new InvalidInput(message, [{ type: 'minimum', path: 'index.ef_construction', message }]);
  }
  return { m, efConstruction };
}

const presentEmbeddingModel = (m: EmbeddingModel) => ({
  id: m.id,
  name: m.name,
  description: m.description,
  provider: m.provider,
  parameters: m.provider === 'openai' ? { ...m.parameters, has_api_key: m.hasApiKey } : m.parameters,
  size: m.size,
  index: { m: m.index.m, ef_construction: m.index.efConstruction },
  created_at: m.created_at.toISOString(),
  updated_at: m.updated_at.toISOString(),
});

const modelSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    provider: { enum: ['hash', 'openai'] },
    parameters: { type: 'object' },
    size: { type: 'integer' },
    index: {
      type: 'object',
      properties: {
        m: { type: 'integer' },
        ef_construction: { type: 'integer' },
        state: { enum: ['ready', 'building', 'rebuilding', 'absent'] },
      },
    },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
} as const;

export function embeddingModelRoutes(
  routes: RouteRegistry,
  deps: {
    embeddingModels: EmbeddingModelStore;
    embeddingModelLookup: EmbeddingModelLookup;
    vectorIndexes: VectorIndexStore;
    temporal: Pick<Client, 'workflow'>;
    taskQueue: string;
  },
): Router {
  const router = Router();
  const withState = async (model: EmbeddingModel) => {
    const shown = presentEmbeddingModel(model);
    return { ...shown, index: { ...shown.index, state: await deps.vectorIndexes.state(model.id) } };
  };
  // One workflow per model: a request while one runs joins it (its activity re-reads the model's
  // parameters after each build and builds again when they changed).
  const startIndexMaintenance = async (embeddingModelId: string, rebuild: boolean): Promise<void> => {
    await deps.temporal.workflow
      .start('vectorIndexMaintenance', {
        taskQueue: deps.taskQueue,
        workflowId: vectorIndexWorkflowId(embeddingModelId),
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ embeddingModelId, rebuild }],
        staticSummary: `vector index of embedding model ${embeddingModelId}${rebuild ? ' (rebuild)' : ''}`,
      })
      .catch(() => {
        throw new Unavailable('The index rebuild could not be started (Temporal unavailable); try again');
      });
  };
  const load = (id: unknown, principal: Principal, action: 'read' | 'write') =>
    loadAuthorized(principal, action, 'embedding_models', 'Embedding model', id, (mid) =>
      deps.embeddingModels.get(mid),
    );

  routes.add(
    router,
    {
      method: 'get',
      path: '/embedding_providers',
      summary: 'Built-in embedding providers',
      tag: 'Embedding models',
      success: { status: 200, description: '{data: [{id, provider, description}]}' },
      errors: [401],
    },
    (_req, res) => {
      res.json({ data: EMBEDDING_PROVIDERS });
    },
  );

  routes.add<CreateEmbeddingModelBody>(
    router,
    {
      method: 'post',
      path: '/embedding_models',
      summary: 'Create an embedding model',
      tag: 'Embedding models',
      permission: 'write:embedding_models',
      body: createEmbeddingModelSchema,
      success: { status: 201, description: 'The model (its api_key is never returned)', schema: modelSchema },
      errors: [400, 401, 403, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      requireCreate(principal, 'embedding_models', 'embedding model');
      const raw = req.body.parameters ?? {};
      let parameters: Record<string, unknown> = {};
      let apiKey: string | undefined;
      if (req.body.provider === 'openai') {
        const p = validate<OpenAiParameters>(openAiParametersSchema, raw, 'parameters');
        parameters = { endpoint: p.endpoint, model: p.model, batch_size: p.batch_size ?? DEFAULT_BATCH_SIZE };
        apiKey = p.api_key;
      } else {
        validate(hashParametersSchema, raw, 'parameters');
      }
      const model = await deps.embeddingModels.create({
        id: newId(),
        name: req.body.name,
        description: req.body.description ?? null,
        provider: req.body.provider,
        parameters,
        size: req.body.size,
        index: hnswParameters(req.body.index),
        ownerKeyId: principal.keyId,
        ...(apiKey !== undefined ? { apiKey } : {}),
      });
      res.status(201).json(presentEmbeddingModel(model));
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/embedding_models',
      summary: 'List embedding models the caller can read',
      tag: 'Embedding models',
      query: LIST_QUERY,
      success: { status: 200, description: 'List envelope', schema: listEnvelopeSchema(modelSchema) },
      errors: [400, 401],
    },
    async (req, res) => {
      const page = await deps.embeddingModels.list(
        principalOf(req),
        parseListQuery(req.query, EMBEDDING_MODEL_FIELDS),
      );
      res.json({ ...page, data: page.data.map(presentEmbeddingModel) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/embedding_models/:id',
      summary:
        "Get an embedding model, with its index's state (ready, building, or absent while a large load defers it)",
      tag: 'Embedding models',
      permission: 'read:embedding_models',
      success: { status: 200, description: 'The model', schema: modelSchema },
      errors: [401, 404],
    },
    async (req, res) => {
      res.json(await withState(await load(req.params.id, principalOf(req), 'read')));
    },
  );

  routes.add<UpdateEmbeddingModelBody>(
    router,
    {
      method: 'patch',
      path: '/embedding_models/:id',
      summary:
        "Update an embedding model's name, description or index parameters (a changed index is rebuilt beside the old one)",
      tag: 'Embedding models',
      permission: 'write:embedding_models',
      body: updateEmbeddingModelSchema,
      success: { status: 200, description: 'The model, with its index state', schema: modelSchema },
      errors: [400, 401, 403, 404, 409, 503],
    },
    async (req, res) => {
      const model = await load(req.params.id, principalOf(req), 'write');
      const { index, ...fields } = req.body;
      const parameters = hnswParameters(index, model.index);
      const changed =
        parameters.m !== model.index.m || parameters.efConstruction !== model.index.efConstruction;
      const updated = await deps.embeddingModels.update(model.id, { ...fields, index: parameters });
      deps.embeddingModelLookup.invalidate(model.id);
      if (changed) await startIndexMaintenance(model.id, false);
      res.json(await withState(updated));
    },
  );

  routes.add(
    router,
    {
      method: 'post',
      path: '/embedding_models/:id/index\\:rebuild',
      summary: "Rebuild the model's HNSW index with its parameters, beside the old one (searches go on)",
      tag: 'Embedding models',
      permission: 'write:embedding_models',
      success: { status: 202, description: 'The model, with its index state', schema: modelSchema },
      errors: [401, 403, 404, 503],
    },
    async (req, res) => {
      const model = await load(req.params.id, principalOf(req), 'write');
      await startIndexMaintenance(model.id, true);
      res.status(202).json(await withState(model));
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/embedding_models/:id',
      summary: 'Delete an embedding model (409 while a pipeline uses it)',
      tag: 'Embedding models',
      permission: 'write:embedding_models',
      success: { status: 204, description: 'Deleted' },
      errors: [401, 403, 404, 409],
    },
    async (req, res) => {
      const model = await load(req.params.id, principalOf(req), 'write');
      await deps.embeddingModels.delete(model.id);
      deps.embeddingModelLookup.invalidate(model.id);
      res.status(204).end();
    },
  );
  return router;
}
