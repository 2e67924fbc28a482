// SPEC §3: on a synchronous path (POST /pipelines/{id}/search, the agent retrieval dry run) an
// embedding server that failed is a 502 naming the embedding model. The retrieval and ingestion
// activities classify the same EmbeddingError for Temporal's retries instead.
import { UpstreamFailed } from '../domain/errors';
import { EmbeddingError } from '../infra/embedders';

/** Runs `search`; an EmbeddingError becomes UpstreamFailed naming the model (the handler's 502). */
export async function withEmbeddingFailure<T>(model: { name: string }, search: () => Promise<T>): Promise<T> {
  try {
    return await search();
  } catch (err) {
    if (err instanceof EmbeddingError)
      throw new UpstreamFailed(`Embedding server of embedding model ${model.name} failed: ${err.message}`);
    throw err;
  }
}
