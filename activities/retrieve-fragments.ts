// EX-2: the activity that retrieves one retrieval placeholder's fragments for an execution
// (services/retrieval.ts, shared with the dry run); the fragments stay in this process for render
// and the trace, and history gets their ids and scores only.
import { ApplicationFailure } from '@temporalio/common';
import type { AgentStore } from '../db/agent-store';
import type { EmbeddingModelLookup } from '../db/embedding-model-lookup';
import type { ExecutionStore } from '../db/execution-store';
import type { PipelineStore } from '../db/pipeline-store';
import { EmbeddingError } from '../infra/embedders';
import { FailureType, type FragmentRef, type RetrieveInput } from '../workflows/contracts';
import type { ExecutionScratch } from './execution-scratch';
import { embedWith, QueryEmbeddings } from '../services/query-embeddings';
import {
  isRetrieval,
  retrieveForPlaceholder,
  type AgentRequestContent,
  type FilteredSearchDeps,
} from '../services/retrieval';

export interface RetrievalDeps extends FilteredSearchDeps {
  agents: AgentStore;
  pipelines: PipelineStore;
  embeddingModelLookup: EmbeddingModelLookup;
  executions: ExecutionStore;
  /** What the execution's next steps take from this one (activities/execution-scratch.ts). */
  scratch: ExecutionScratch;
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
