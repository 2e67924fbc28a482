// EX-2: one retrieval per retrieval placeholder, and the same code for the dry run (SPEC §10):
// the placeholder's target value is the search text, with the request's classifications, the
// placeholder's own filter and params, cosine distance and the pipeline's embedding model.
// History gets fragment ids and scores only.
import { ApplicationFailure } from '@temporalio/common';
import type { AgentStore } from '../db/agent-store';
import type { EmbeddingModel } from '../db/embedding-model-store';
import type { EmbeddingModelLookup } from '../db/embedding-model-lookup';
import type { ExecutionStore } from '../db/execution-store';
import type { Pipeline, PipelineStore } from '../db/pipeline-store';
import type { Placeholder } from '../domain/agent-definition';
import { compileFilter } from '../domain/filter-compiler';
import { parseFilter } from '../domain/filter-parser';
import type { Limits } from '../domain/limits';
import { EmbeddingError } from '../infra/embedders';
import { FailureType, type FragmentRef, type RetrieveInput } from '../workflows/contracts';
import type { ExecutionScratch } from './execution-scratch';
import { embedWith, QueryEmbeddings } from './query-embeddings';
import { searchFragments, type ScoredFragment, type SearchDeps } from './search-fragments';

/** What the API stores for an agent execution (encrypted, SPEC §9.3). */
export interface AgentRequestContent {
  values: Record<string, string>;
  classifications: string[];
  filters: Record<string, unknown>;
}

/** A search with the request's filters, parsed within the SPEC §18 filter depth. */
export interface FilteredSearchDeps extends SearchDeps {
  limits: Pick<Limits, 'filterDepth'>;
}

export interface RetrievalDeps extends FilteredSearchDeps {
  agents: AgentStore;
  pipelines: PipelineStore;
  embeddingModelLookup: EmbeddingModelLookup;
  executions: ExecutionStore;
  /** What the execution's next steps take from this one (activities/execution-scratch.ts). */
  scratch: ExecutionScratch;
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

const missing = (what: string): ApplicationFailure =>
  ApplicationFailure.create({
    type: FailureType.NotFound,
    message: `${what} no longer exists`,
    nonRetryable: true,
  });

export function createRetrieveFragments(deps: RetrievalDeps) {
  const queries = new QueryEmbeddings(embedWith(deps));
  const { embeddingModels, fragments, limits } = deps;
  return async function retrieveFragments(input: RetrieveInput): Promise<FragmentRef[]> {
    // The version, pipeline and model from in-process copies; the request once per execution.
    const [version, pipeline, request] = await Promise.all([
      deps.agents.getVersion(input.agentId, input.agentVersion),
      deps.pipelines.getCached(input.pipelineId),
      deps.scratch.request(input.executionId, () =>
        deps.executions.getPayload<AgentRequestContent>(input.requestPayloadId),
      ),
    ]);
    if (!version) throw missing('The agent');
    if (!pipeline) throw missing('The pipeline');
    if (!request) throw missing('The execution content');
    const placeholder = version.placeholders.find((p) => p.name === input.placeholder);
    if (!placeholder || !isRetrieval(placeholder)) throw missing(`Placeholder ${input.placeholder}`);
    const model = await deps.embeddingModelLookup.get(pipeline.embedding_model_id);
    if (!model) throw missing('The embedding model');
    try {
      const search = {
        embeddingModels,
        fragments,
        limits,
        embedQuery: queries.forExecution(input.executionId),
      };
      const found = await retrieveForPlaceholder(search, pipeline, model, placeholder, request);
      // Render inserts them (and the trace keeps them): handed over, not read and decrypted again.
      deps.scratch.keepRetrieved(input.executionId, input.placeholder, found);
      return found.map((f) => ({ id: f.id, score: f.score }));
    } catch (err) {
      if (!(err instanceof EmbeddingError)) throw err;
      const retryable = err.kind === 'retryable' || err.kind === 'unreachable';
      throw ApplicationFailure.create({
        type: FailureType.RetrievalEmbeddingFailed,
        message: `Embedding server failed: ${err.message}`,
        details: [{ upstreamStatus: err.upstreamStatus, message: err.message }],
        nonRetryable: !retryable,
      });
    }
  };
}
