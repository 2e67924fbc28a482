// POST /pipelines/{id}/search (SPEC §6): the pipeline's current fragments a reader may see, by
// similarity (SR-3, the default), MMR (SR-4), full text or hybrid (SR-1), with metadata filters
// compiled to SQL (SPEC §7). The search itself is activities/search-fragments.ts, shared with
// retrieval.
import { Router } from 'express';
import type { EmbeddingModelLookup } from '../../db/embedding-model-lookup';
import type { EmbeddingModelStore } from '../../db/embedding-model-store';
import type { FragmentStore } from '../../db/fragment-store';
import type { PipelineStore } from '../../db/pipeline-store';
import { searchFragments } from '../../services/search-fragments';
import { resolveReader } from '../../domain/classifications';
import { compileFilter } from '../../domain/filter-compiler';
import { parseFilter } from '../../domain/filter-parser';
import type { Limits } from '../../domain/limits';
import { loadAuthorized } from '../access';
import { principalOf } from '../auth';
import { withEmbeddingFailure } from '../embedding-failure';
import type { RouteRegistry } from '../route-registry';
import { fragmentSchema, searchSchema, type SearchBody } from '../schemas/knowledge';

interface SearchRouteDeps {
  pipelines: PipelineStore;
  fragments: FragmentStore;
  embeddingModels: EmbeddingModelStore;
  embeddingModelLookup: EmbeddingModelLookup;
  limits: Pick<Limits, 'k' | 'filterDepth'>;
}

export function searchRoutes(routes: RouteRegistry, deps: SearchRouteDeps): Router {
  const router = Router();
  routes.add<SearchBody>(
    router,
    {
      method: 'post',
      path: '/pipelines/:id/search',
      summary: 'Search current fragments: similarity (default), mmr, full_text or hybrid',
      tag: 'Search',
      permission: 'execute:pipelines',
      body: searchSchema(deps.limits),
      success: {
        status: 200,
        description: '{data: [fragment...]}',
        schema: { type: 'object', properties: { data: { type: 'array', items: fragmentSchema } } },
      },
      errors: [400, 401, 403, 404, 502],
    },
    async (req, res) => {
      const pipeline = await loadAuthorized(
        principalOf(req),
        'execute',
        'pipelines',
        'Pipeline',
        req.params.id,
        (id) => deps.pipelines.getCached(id),
      );
      const body = req.body;
      const classifications = resolveReader(body.classification, pipeline.closure);
      const filter = body.filters
        ? compileFilter(parseFilter(body.filters, deps.limits.filterDepth), 'f.metadata')
        : null;
      // The pipeline and its model come from copies (infra/lookup-cache.ts): authentication and
      // the search are the request's two round trips.
      const model = (await deps.embeddingModelLookup.get(pipeline.embedding_model_id))!;
      const data = await withEmbeddingFailure(model, () =>
        searchFragments(deps, pipeline, model, {
          query: body.query,
          classifications,
          filter,
          searchType: body.search_type ?? 'similarity',
          k: body.k ?? 5,
          fetchK: body.fetch_k ?? 10,
          lambdaMult: body.lambda_mult ?? 0.5,
          threshold: body.threshold ?? null,
        }),
      );
      res.json({ data });
    },
  );
  return router;
}
