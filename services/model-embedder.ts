// The embedder of a stored embedding model, with its API key decrypted for this call only: what
// ingestion and search-text embedding share.
import type { EmbeddingModel, EmbeddingModelStore } from '../db/embedding-model-store';
import { createEmbedder } from '../infra/create-embedder';
import type { Embedder } from '../infra/embedders';

export async function embedderFor(
  deps: { embeddingModels: EmbeddingModelStore },
  model: EmbeddingModel,
): Promise<Embedder> {
  const apiKey = model.hasApiKey ? await deps.embeddingModels.apiKey(model.id) : undefined;
  return createEmbedder(model.provider, model.parameters, model.size, apiKey);
}
