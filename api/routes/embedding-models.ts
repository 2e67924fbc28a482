// /embedding_providers and /embedding_models (SPEC §3).
import { Router } from 'express';
import type { EmbeddingModelLookup } from '../../db/embedding-model-lookup';
import {
  DEFAULT_HNSW,
  EMBEDDING_MODEL_FIELDS,
  type EmbeddingModel,
  type EmbeddingModelStore,
  type HnswParameters,
} from '../../db/embedding-model-store';
import type { VectorIndexStore } from '../../db/vector-index';
import { InvalidInput } from '../../domain/errors';
import { parseListQuery } from '../../domain/list-params';
import type { Principal } from '../../domain/permissions';
import { newId } from '../../infra/ids';
import { loadAuthorized, requireCreate } from '../access';
import { principalOf } from '../auth';
import type { RouteRegistry } from '../route-registry';
import { LIST_QUERY, listEnvelopeSchema } from '../schemas/common';
import {
  createEmbeddingModelSchema,
  hashParametersSchema,
  openAiParametersSchema,
  type CreateEmbeddingModelBody,
  type OpenAiParameters,
} from '../schemas/knowledge';
import { validate } from '../validation';

export const EMBEDDING_PROVIDERS = [
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
function hnswParameters(index: CreateEmbeddingModelBody['index']): HnswParameters {
  const m = index?.m ?? DEFAULT_HNSW.m;
  const efConstruction = index?.ef_construction ?? DEFAULT_HNSW.efConstruction;
  if (efConstruction < 2 * m) {
    const message = `index.ef_construction (${efConstruction}) must be at least 2 × index.m (${2 * m})`;
    throw new InvalidInput(message, [{ type: 'minimum', path: 'index.ef_construction', message }]);
  }
  return { m, efConstruction };
}

export const presentEmbeddingModel = (m: EmbeddingModel) => ({
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
        state: { enum: ['ready', 'building', 'absent'] },
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
  },
): Router {
  const router = Router();
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
      const model = presentEmbeddingModel(await load(req.params.id, principalOf(req), 'read'));
      res.json({ ...model, index: { ...model.index, state: await deps.vectorIndexes.state(model.id) } });
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
