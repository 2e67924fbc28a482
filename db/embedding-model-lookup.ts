// Embedding models as the search path reads them, from copies (infra/lookup-cache.ts); their SQL
// stays in db/embedding-model-store.ts. Models have no update: a copy stays right until the model
// is deleted, which a pipeline that uses it prevents, and a pipeline moved to another model names
// another id. The delete route still invalidates.
import type { EmbeddingModel, EmbeddingModelStore } from './embedding-model-store';
import { LookupCache } from '../infra/lookup-cache';

export class EmbeddingModelLookup {
  constructor(
    private readonly models: EmbeddingModelStore,
    private readonly cache = new LookupCache<EmbeddingModel | null>(),
  ) {}

  get(id: string): Promise<EmbeddingModel | null> {
    return this.cache.get(id, () => this.models.get(id));
  }

  invalidate(id: string): void {
    this.cache.invalidate(id);
  }
}
