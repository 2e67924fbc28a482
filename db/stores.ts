// One store per aggregate (DESIGN §2), built together on one knex instance: what the composition
// roots hand to the API and the activities.
import type { Knex } from 'knex';
import type { KeyRing } from '../infra/crypto';
import { LookupCache } from '../infra/lookup-cache';
import { AgentStore } from './agent-store';
import { ApiKeyStore } from './api-key-store';
import { ChainStore } from './chain-store';
import { DocumentStore } from './document-store';
import { EmbeddingModelLookup } from './embedding-model-lookup';
import { EmbeddingModelStore } from './embedding-model-store';
import { ExecutionStore } from './execution-store';
import { FragmentStore } from './fragment-store';
import { IngestionStore } from './ingestion-store';
import type { SessionSettings } from './knex';
import { LlmStore } from './llm-store';
import { PipelineStore } from './pipeline-store';
import { PromptStore } from './prompt-store';
import { RoutingPolicyStore } from './routing-policy-store';
import { TextSplitterStore } from './text-splitter-store';
import { VectorIndexStore, type IndexBuildSettings } from './vector-index';

export interface Stores {
  apiKeys: ApiKeyStore;
  llms: LlmStore;
  executions: ExecutionStore;
  agents: AgentStore;
  embeddingModels: EmbeddingModelStore;
  /** Cached reads of embedding models for the search path. */
  embeddingModelLookup: EmbeddingModelLookup;
  textSplitters: TextSplitterStore;
  pipelines: PipelineStore;
  documents: DocumentStore;
  ingestions: IngestionStore;
  fragments: FragmentStore;
  prompts: PromptStore;
  chains: ChainStore;
  routingPolicies: RoutingPolicyStore;
  vectorIndexes: VectorIndexStore;
}

/**
 * `lookupCacheMs`: how long cached reads (pipelines and embedding models on the search path) may
 * serve a copy (infra/lookup-cache.ts).
 */
export function createStores(
  db: Knex,
  keyring: KeyRing,
  session: SessionSettings,
  indexBuild: IndexBuildSettings,
  lookupCacheMs?: number,
): Stores {
  const documents = new DocumentStore(db, keyring);
  const prompts = new PromptStore(db);
  const embeddingModels = new EmbeddingModelStore(db, keyring);
  const cache = <V>() => new LookupCache<V>(lookupCacheMs);
  return {
    apiKeys: new ApiKeyStore(db),
    llms: new LlmStore(db, keyring, lookupCacheMs),
    executions: new ExecutionStore(db, keyring),
    agents: new AgentStore(db, cache()),
    embeddingModels,
    embeddingModelLookup: new EmbeddingModelLookup(embeddingModels, cache()),
    textSplitters: new TextSplitterStore(db),
    pipelines: new PipelineStore(db, cache()),
    documents,
    ingestions: new IngestionStore(db, keyring),
    fragments: new FragmentStore(db, documents, session.efSearch, session),
    prompts,
    chains: new ChainStore(db, prompts),
    routingPolicies: new RoutingPolicyStore(db),
    vectorIndexes: new VectorIndexStore(db, indexBuild),
  };
}
