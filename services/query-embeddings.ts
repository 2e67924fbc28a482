// EX-2: identical search texts of one execution are embedded once. The retrieval steps of an
// execution are local activities of one workflow task, so they run in this worker process: a
// short-lived memo of the query vectors, keyed by execution, model and a hash of the text, lets
// the second placeholder with the same text reuse the first one's vector. Vectors stay in memory
// only (never in history), for at most a minute; a failed embedding is not kept.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { EmbeddingModel, EmbeddingModelStore } from '../db/embedding-model-store';
import type { Embedder } from '../infra/embedders';
import { embedderFor } from './model-embedder';

const KEEP_MS = 60_000;
/** Texts held at once, across executions (a bound on memory, far above what a minute needs). */
const MAX_TEXTS = 10_000;

export type EmbedQuery = (model: EmbeddingModel, text: string) => Promise<number[]>;

/** Embedders kept, one per model (models are few and never change how they embed). */
const EMBEDDERS_KEPT = 256;

/**
 * A search text's vector from the model's embedder, built once per model (an OpenAI-compatible
 * one reads and decrypts its API key to be built) and kept.
 */
export function embedWith(deps: { embeddingModels: EmbeddingModelStore }): EmbedQuery {
  const embedders = new LRUCache<string, Promise<Embedder>>({ max: EMBEDDERS_KEPT });
  return async (model, text) => {
    let embedder = embedders.get(model.id);
    if (!embedder) {
      embedder = embedderFor(deps, model);
      embedders.set(model.id, embedder);
      embedder.catch(() => embedders.delete(model.id));
    }
    const [vector] = await (await embedder).embed([text]);
    return vector!;
  };
}

export class QueryEmbeddings {
  private readonly vectors: LRUCache<string, Promise<number[]>>;

  constructor(
    private readonly embed: EmbedQuery,
    keepMs = KEEP_MS,
  ) {
    // Expired entries are dropped on time (ttlAutopurge), not only when read or pushed out: each
    // promise keeps its activity's async context (the SDK's Activity, its logger, its heartbeat
    // closures) alive, and without the purge the 10,000 newest executions' stayed in the heap
    // (the soak's worker heap grew 118 → 161 MB in 20 minutes, issue 16).
    this.vectors = new LRUCache<string, Promise<number[]>>({
      max: MAX_TEXTS,
      ttl: keepMs,
      ttlAutopurge: true,
    });
  }

  /** How many vectors are held (in memory, across executions). */
  get held(): number {
    return this.vectors.size;
  }

  /** The embedder of one execution's (or one dry run's) queries. */
  forExecution(executionId: string): EmbedQuery {
    return (model, text) => {
      const key = createHash('sha256').update(`${executionId}\0${model.id}\0${text}`).digest('base64');
      const held = this.vectors.get(key);
      if (held) return held;
      const vector = this.embed(model, text);
      this.vectors.set(key, vector);
      vector.catch(() => this.vectors.delete(key));
      return vector;
    };
  }
}
