// A knowledge pipeline set up through the API for execution tests: an embedding model (the
// built-in `hash` one unless given), a line splitter, a pipeline of one classification, and
// documents ingested until ready; and the waits for a document's ingestion to settle.
import type { Api } from './http';
import { until } from './wait';

/** Polls a document (through the API) until its status is one of `statuses`; returns its body. */
export function documentSettled(
  api: Api,
  pipelineId: string,
  documentId: string,
  { statuses = ['ready', 'failed'], timeoutMs = 60_000 }: { statuses?: string[]; timeoutMs?: number } = {},
): Promise<any> {
  return until(
    async () => {
      const res = await api.get(`/pipelines/${pipelineId}/documents/${documentId}`);
      return res.status === 200 && statuses.includes(res.body.status) ? res.body : undefined;
    },
    { what: `document ${documentId} to reach ${statuses.join(' or ')}`, timeoutMs, intervalMs: 100 },
  );
}

/** Waits until every document is ready; fails naming the first that failed to ingest. */
export async function documentsReady(api: Api, pipelineId: string, documentIds: string[]): Promise<void> {
  for (const id of documentIds) {
    const body = await documentSettled(api, pipelineId, id);
    if (body.status !== 'ready') throw new Error(`ingestion failed: ${JSON.stringify(body)}`);
  }
}

export interface SeededPipeline {
  pipelineId: string;
  embeddingModelId: string;
}

export async function seedPipeline(
  api: Api,
  options: {
    name: string;
    embeddingModel?: Record<string, unknown>;
    classification?: string;
    /** The pipeline's hierarchy (default: the one level `classification`). */
    classifications?: { name: string; includes?: string[] }[];
    documents?: string[];
  },
): Promise<SeededPipeline> {
  const classification = options.classification ?? 'public';
  const model = await api.post(
    '/embedding_models',
    options.embeddingModel ?? { name: `${options.name}-hash`, provider: 'hash', size: 64 },
  );
  const splitter = await api.post('/text_splitters', {
    name: `${options.name}-lines`,
    provider: 'character',
    parameters: { separator: '\n', chunk_size: 60, chunk_overlap: 0 },
  });
  const pipeline = await api.post('/pipelines', {
    name: options.name,
    embedding_model_id: model.body.id,
    text_splitter_id: splitter.body.id,
    classifications: options.classifications ?? [{ name: classification }],
  });
  const pipelineId = pipeline.body.id as string;
  for (const content of options.documents ?? []) {
    const doc = await api.post(`/pipelines/${pipelineId}/documents`, { content, classification });
    await documentsReady(api, pipelineId, [doc.body.id]);
  }
  return { pipelineId, embeddingModelId: model.body.id as string };
}

/** The usual retrieval agent: a query placeholder and one similarity placeholder over it (k = 1). */
export async function createRetrievalAgent(api: Api, name: string): Promise<string> {
  const agent = await api.post('/agents', {
    name,
    prompt: [
      { role: 'system', template: 'Answer from the context.' },
      { role: 'user', template: '{context}\nQuestion: {question}' },
    ],
    placeholders: [
      { name: 'question', type: 'query' },
      { name: 'context', type: 'similarity', target: 'question', params: { k: 1 } },
    ],
  });
  if (agent.status !== 201) throw new Error(`creating agent ${name}: ${agent.status} ${agent.text}`);
  return agent.body.id as string;
}
