// EX-2: one placeholder's retrieval, the same code for the execution's activity and the dry run
// (SPEC §10): the placeholder's target value is the search text, with the request's
// classifications, the placeholder's own filter and params, and the pipeline's embedding model.
import type { EmbeddingModel } from '../db/embedding-model-store';
import type { Pipeline } from '../db/pipeline-store';
import type { Placeholder } from '../domain/agent-definition';
import { compileFilter } from '../domain/filter-compiler';
import { parseFilter } from '../domain/filter-parser';
import type { Limits } from '../domain/limits';
import type { ResponsesModelRequest } from '../domain/llm-request';
import { searchFragments, type ScoredFragment, type SearchDeps } from './search-fragments';

/** What the API stores for an agent execution (encrypted, SPEC §9.3). */
export interface AgentRequestContent {
  values: Record<string, string>;
  classifications: string[];
  filters: Record<string, unknown>;
  /**
   * A /v1/responses create's conversation (`input`, `previous_response_id`: its context and input
   * items, which follow the rendered messages, SPEC OR-3) and the parameters its response echoes.
   */
  responses?: Pick<
    ResponsesModelRequest,
    'context' | 'input' | 'temperature' | 'store' | 'background' | 'previous_response_id'
  >;
}

/** A search with the request's filters, parsed within the SPEC §18 filter depth. */
export interface FilteredSearchDeps extends SearchDeps {
  limits: Pick<Limits, 'filterDepth'>;
}

type RetrievalPlaceholder = Extract<Placeholder, { type: 'similarity' | 'mmr' }>;

export const isRetrieval = (p: Placeholder): p is RetrievalPlaceholder => p.type !== 'query';

/** One placeholder's fragments, in rank order (shared by the activity and the dry run). */
export function retrieveForPlaceholder(
  deps: FilteredSearchDeps,
  pipeline: Pipeline,
  model: EmbeddingModel,
  placeholder: RetrievalPlaceholder,
  request: AgentRequestContent,
): Promise<ScoredFragment[]> {
  const filter = request.filters[placeholder.name];
  const params = placeholder.params;
  return searchFragments(deps, pipeline, model, {
    query: request.values[placeholder.target] ?? '',
    classifications: request.classifications,
    filter:
      filter === undefined ? null : compileFilter(parseFilter(filter, deps.limits.filterDepth), 'f.metadata'),
    searchType: placeholder.type,
    k: params.k,
    fetchK: placeholder.type === 'mmr' ? placeholder.params.fetch_k : 0,
    lambdaMult: placeholder.type === 'mmr' ? placeholder.params.lambda_mult : 0,
    threshold: params.threshold,
  });
}
