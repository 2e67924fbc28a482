// Payloads of embedding models, text splitters, pipelines, documents and search (SPEC §3–§6).
// Schemas that hold a SPEC §18 limit are built from the configured limits by their router
// factory, so /openapi.json documents the configured value.
import type { Limits } from '../../domain/limits';
import { descriptionSchema, nameSchema, upstreamApiKeySchema } from './common';

const uuid = { type: 'string', format: 'uuid' } as const;

export const createEmbeddingModelSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'provider', 'size'],
  properties: {
    name: nameSchema,
    description: descriptionSchema,
    provider: { enum: ['hash', 'openai'] },
    parameters: { type: 'object' },
    size: { type: 'integer', minimum: 1, maximum: 2000 },
    index: {
      type: 'object',
      additionalProperties: false,
      description: "The HNSW index's build parameters (pgvector's; ef_construction at least 2·m)",
      properties: {
        m: { type: 'integer', minimum: 2, maximum: 100, default: 16 },
        ef_construction: { type: 'integer', minimum: 4, maximum: 1000, default: 200 },
      },
    },
  },
} as const;

/** PATCH: what may change on a model that has vectors (provider, parameters and size may not). */
export const updateEmbeddingModelSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: nameSchema,
    description: descriptionSchema,
    index: {
      ...createEmbeddingModelSchema.properties.index,
      description:
        'New HNSW build parameters: the index is rebuilt CONCURRENTLY beside the old one, which serves searches until the new one is valid',
    },
  },
} as const;

export interface UpdateEmbeddingModelBody {
  name?: string;
  description?: string | null;
  index?: { m?: number; ef_construction?: number };
}

export interface CreateEmbeddingModelBody {
  name: string;
  description?: string | null;
  provider: 'hash' | 'openai';
  parameters?: Record<string, unknown>;
  size: number;
  index?: { m?: number; ef_construction?: number };
}

export const hashParametersSchema = { type: 'object', additionalProperties: false, properties: {} } as const;

export const openAiParametersSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['endpoint', 'model', 'api_key'],
  properties: {
    endpoint: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2000 },
    model: { type: 'string', minLength: 1, maxLength: 200 },
    api_key: upstreamApiKeySchema,
    batch_size: { type: 'integer', minimum: 1, maximum: 2048 },
  },
} as const;

export interface OpenAiParameters {
  endpoint: string;
  model: string;
  api_key: string;
  batch_size?: number;
}

export const createTextSplitterSchema = (limits: Pick<Limits, 'fragmentChars'>) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['name', 'provider'],
    properties: {
      name: nameSchema,
      description: descriptionSchema,
      provider: { enum: ['recursive_character', 'character'] },
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          chunk_size: { type: 'integer', minimum: 1, maximum: limits.fragmentChars },
          chunk_overlap: { type: 'integer', minimum: 0 },
          separator: { type: 'string', minLength: 1, maxLength: 100 },
        },
      },
    },
  }) as const;

export interface CreateTextSplitterBody {
  name: string;
  description?: string | null;
  provider: 'recursive_character' | 'character';
  parameters?: { chunk_size?: number; chunk_overlap?: number; separator?: string };
}

const classificationsSchema = {
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 64 },
      includes: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 64 } },
    },
  },
} as const;

const pipelineProperties = {
  name: nameSchema,
  description: descriptionSchema,
  embedding_model_id: uuid,
  text_splitter_id: uuid,
  classifications: classificationsSchema,
  metadata_schema: { type: ['object', 'null'] },
  text_search_config: { type: 'string', minLength: 1, maxLength: 63 },
} as const;

export const createPipelineSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'embedding_model_id', 'text_splitter_id', 'classifications'],
  properties: pipelineProperties,
} as const;

export const updatePipelineSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: pipelineProperties.name,
    description: pipelineProperties.description,
    embedding_model_id: pipelineProperties.embedding_model_id,
    text_splitter_id: pipelineProperties.text_splitter_id,
    classifications: pipelineProperties.classifications,
    metadata_schema: pipelineProperties.metadata_schema,
  },
} as const;

export interface PipelineBody {
  name: string;
  description?: string | null;
  embedding_model_id: string;
  text_splitter_id: string;
  classifications: { name: string; includes?: string[] }[];
  metadata_schema?: Record<string, unknown> | null;
  text_search_config?: string;
}

/** SPEC §5: content up to 10 MB (characters). */
const MAX_CONTENT_LENGTH = 10 * 1024 * 1024;

const documentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['content', 'classification'],
  properties: {
    content: { type: 'string', minLength: 1, maxLength: MAX_CONTENT_LENGTH },
    classification: { type: 'string', minLength: 1, maxLength: 64 },
    metadata: { type: 'object' },
    external_id: { type: 'string', minLength: 1, maxLength: 512 },
    text_splitter_id: uuid,
  },
} as const;

export const createDocumentSchema = documentSchema;

export interface DocumentBody {
  content: string;
  classification: string;
  metadata?: Record<string, unknown>;
  external_id?: string;
  text_splitter_id?: string;
}

export const createDocumentBatchSchema = (limits: Pick<Limits, 'documentsPerBatch'>) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['documents'],
    properties: {
      documents: { type: 'array', minItems: 1, maxItems: limits.documentsPerBatch, items: documentSchema },
    },
  }) as const;

export interface DocumentBatchBody {
  documents: DocumentBody[];
}

/** CL-2 reader forms. */
const readerClassificationSchema = {
  anyOf: [
    { type: 'string' },
    { type: 'object' },
    { type: 'array', maxItems: 100, items: { anyOf: [{ type: 'string' }, { type: 'object' }] } },
  ],
} as const;

export const searchSchema = (limits: Pick<Limits, 'k'>) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['query', 'classification'],
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 100_000 },
      classification: readerClassificationSchema,
      filters: { type: 'object' },
      search_type: { enum: ['similarity', 'mmr', 'full_text', 'hybrid'] },
      k: { type: 'integer', minimum: 1, maximum: limits.k },
      fetch_k: { type: 'integer', minimum: 0, maximum: 1000 },
      lambda_mult: { type: 'number', minimum: 0, maximum: 1 },
      threshold: { type: ['number', 'null'], minimum: 0 },
    },
  }) as const;

export interface SearchBody {
  query: string;
  classification: unknown;
  filters?: Record<string, unknown>;
  search_type?: 'similarity' | 'mmr' | 'full_text' | 'hybrid';
  k?: number;
  fetch_k?: number;
  lambda_mult?: number;
  threshold?: number | null;
}

export const fragmentSchema = {
  type: 'object',
  properties: {
    id: uuid,
    classification: { type: 'string' },
    metadata: { type: 'object' },
    document_id: uuid,
    page_content: { type: 'string' },
    version: { type: 'integer' },
    expired_at: { type: ['string', 'null'] },
    score: { type: 'number' },
    order_id: { type: 'integer' },
  },
} as const;
