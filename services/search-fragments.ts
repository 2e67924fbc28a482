// One search over a pipeline (SPEC §6): embed the query with the pipeline's model, then
// similarity (SR-3), MMR (SR-4), full text or hybrid (SR-1). Used by POST /pipelines/{id}/search
// and by retrieval, so both run the same code with the same predicates.
import type { EmbeddingModel, EmbeddingModelStore } from '../db/embedding-model-store';
import type { FragmentRecord } from '../db/document-store';
import type { FragmentStore, SearchScope } from '../db/fragment-store';
import type { Pipeline } from '../db/pipeline-store';
import { mmr } from '../domain/mmr';
import { embedderFor } from './model-embedder';
import type { EmbedQuery } from './query-embeddings';

type SearchType = 'similarity' | 'mmr' | 'full_text' | 'hybrid';

interface SearchParams {
  query: string;
  /** Resolved reader classifications (CL-2). */
  classifications: string[];
  filter: { sql: string; bindings: unknown[] } | null;
  searchType: SearchType;
  k: number;
  fetchK: number;
  lambdaMult: number;
  threshold: number | null;
}

export interface ScoredFragment extends FragmentRecord {
  score: number;
  order_id: number;
}

export interface SearchDeps {
  embeddingModels: EmbeddingModelStore;
  fragments: FragmentStore;
  /** Embeds a search text (default: the model's embedder each time). */
  embedQuery?: EmbedQuery;
}

/** Reciprocal-rank fusion constant (SR-1). */
const RRF_K = 60;

const ranked = <T extends FragmentRecord>(items: T[], score: (item: T) => number): ScoredFragment[] =>
  items.map((item, i) => ({ ...stripScores(item), score: score(item), order_id: i }));

export async function searchFragments(
  deps: SearchDeps,
  pipeline: Pipeline,
  model: EmbeddingModel,
  params: SearchParams,
): Promise<ScoredFragment[]> {
  const scope: SearchScope = {
    pipelineId: pipeline.id,
    embeddingModelId: model.id,
    size: model.size,
    classifications: params.classifications,
    filter: params.filter,
  };
  if (params.classifications.length === 0) return [];
  const withinThreshold = <T extends { distance: number }>(hits: T[]): T[] =>
    params.threshold === null ? hits : hits.filter((h) => h.distance <= params.threshold!);

  if (params.searchType === 'full_text') {
    const hits = await deps.fragments.fullText(scope, pipeline.text_search_config, params.query, params.k);
    return ranked(hits, (h) => h.rank);
  }

  const vector = deps.embedQuery
    ? await deps.embedQuery(model, params.query)
    : (await (await embedderFor(deps, model)).embed([params.query]))[0]!;
  switch (params.searchType) {
    case 'similarity': {
      const hits = withinThreshold(await deps.fragments.nearest(scope, vector, params.k));
      return ranked(hits, (h) => h.distance);
    }
    case 'mmr': {
      const candidates = withinThreshold(await deps.fragments.nearest(scope, vector, params.fetchK, true));
      const order = mmr(vector, candidates as { embedding: number[] }[], params.k, params.lambdaMult);
      return ranked(
        order.map((i) => candidates[i]!),
        (h) => h.distance,
      );
    }
    case 'hybrid': {
      const depth = Math.min(Math.max(params.k * 4, 20), 200);
      const [vectorHits, textHits] = await Promise.all([
        deps.fragments.nearest(scope, vector, depth),
        deps.fragments.fullText(scope, pipeline.text_search_config, params.query, depth),
      ]);
      const fused = new Map<string, { fragment: FragmentRecord; score: number }>();
      for (const list of [vectorHits, textHits] as FragmentRecord[][]) {
        list.forEach((fragment, rank) => {
          const entry = fused.get(fragment.id) ?? { fragment, score: 0 };
          entry.score += 1 / (RRF_K + rank + 1);
          fused.set(fragment.id, entry);
        });
      }
      const top = [...fused.values()]
        .sort((a, b) => b.score - a.score || a.fragment.id.localeCompare(b.fragment.id))
        .slice(0, params.k);
      return top.map((entry, i) => ({ ...stripScores(entry.fragment), score: entry.score, order_id: i }));
    }
  }
  return [];
}

function stripScores(f: FragmentRecord): FragmentRecord {
  const { id, classification, metadata, document_id, page_content, version, expired_at } = f;
  return { id, classification, metadata, document_id, page_content, version, expired_at };
}
