// An embedder from a stored embedding model (SPEC §3): the built-in `hash` or `openai`.
import type { Embedder } from './embedders';
import { HashEmbedder } from './hash-embedder';
import { OpenAiEmbedder } from './openai-embedder';

const DEFAULT_BATCH_SIZE = 64;

/**
 * An embedder from a stored embedding model (SPEC §3). `parameters` are the model's public
 * parameters (openai: endpoint, model, batch_size); the decrypted api key comes separately.
 */
export function createEmbedder(
  provider: 'hash' | 'openai',
  parameters: Record<string, unknown>,
  size: number,
  apiKey?: string,
): Embedder {
  if (provider === 'hash') return new HashEmbedder(size);
  if (provider !== 'openai') throw new Error(`Unknown embedding provider: ${String(provider)}`);
  const { endpoint, model, batch_size: batchSize = DEFAULT_BATCH_SIZE } = parameters;
  if (typeof endpoint !== 'string' || endpoint === '') {
    throw new Error('The openai embedding provider needs a string parameter "endpoint"');
  }
  if (typeof model !== 'string' || model === '') {
    throw new Error('The openai embedding provider needs a string parameter "model"');
  }
  if (typeof batchSize !== 'number') throw new Error('The "batch_size" parameter must be an integer');
  // Servers without authentication (vLLM, Ollama, TEI) ignore the header; the SDK needs some key.
  return new OpenAiEmbedder({ endpoint, model, apiKey: apiKey ?? 'none', batchSize, size });
}
