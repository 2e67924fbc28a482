// A knowledge pipeline set up through the API for execution tests: an embedding model (the
// built-in `hash` one unless given), a line splitter, a pipeline of one classification, and
// documents ingested until ready.
import type { Api } from './http';

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
    classifications: [{ name: classification }],
  });
  const pipelineId = pipeline.body.id as string;
  for (const content of options.documents ?? []) {
    const doc = await api.post(`/pipelines/${pipelineId}/documents`, { content, classification });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const got = await api.get(`/pipelines/${pipelineId}/documents/${doc.body.id}`);
      if (got.body.status === 'ready') break;
      if (Date.now() > deadline) throw new Error(`document not ready: ${JSON.stringify(got.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { pipelineId, embeddingModelId: model.body.id as string };
}
