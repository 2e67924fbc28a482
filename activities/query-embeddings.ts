// EX-2: identical search texts of one execution are embedded once. The retrieval steps of an
// execution are local activities of one workflow task, so they run in this worker process: a
// short-lived memo of the query vectors, keyed by execution, model and a hash of the text, lets
// the second placeholder with the same text reuse the first one's vector. Vectors stay in memory
// only (never in history), for at most a minute; a failed embedding is not kept.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { EmbeddingModel, EmbeddingModelStore } from '../db/embedding-model-store';
import { embedderFor } from './model-embedder';

const KEEP_MS = 60_000;
/** Texts held at once, across executions (a bound on memory, far above what a minute needs). */
const MAX_TEXTS = 10_000;

export type EmbedQuery = (model: EmbeddingModel, text: string) => Promise<number[]>;

/** A search text's vector from the model's embedder. */
export const embedWith =
  (deps: { embeddingModels: EmbeddingModelStore }): EmbedQuery =>
  async (model, text) => {
    const [vector] = await (await embedderFor(deps, model)).embed([text]);
    return vector!;
  };

export class QueryEmbeddings {
  private readonly vectors = new LRUCache<string, Promise<number[]>>({ max: MAX_TEXTS, ttl: KEEP_MS });

  constructor(private readonly embed: EmbedQuery) {}

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
