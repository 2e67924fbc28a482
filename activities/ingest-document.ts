// Document ingestion activities (SPEC §5): split and stage, embed a range of fragments, make the
// version current, or record its failure. Each may run twice (DOC-3): staging ignores rows that
// exist, embedding skips fragments that have one, finishing is a no-op once ready.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { IngestionStore } from '../db/ingestion-store';
import type { EmbeddingModelStore } from '../db/embedding-model-store';
import type { PipelineStore } from '../db/pipeline-store';
import type { TextSplitterStore } from '../db/text-splitter-store';
import { EmbeddingError } from '../infra/embedders';
import { splitText } from '../infra/text-splitters';
import type { Limits } from '../domain/limits';
import { IngestionFailure } from '../workflows/contracts';
import { embedderFor } from './model-embedder';
import type { SearchDeps } from './search-fragments';

export interface IngestionDeps extends Pick<SearchDeps, 'embeddingModels'> {
  ingestions: IngestionStore;
  pipelines: PipelineStore;
  textSplitters: TextSplitterStore;
  embeddingModels: EmbeddingModelStore;
  /** SPEC §18: no fragment longer than the configured fragment limit. */
  limits: Pick<Limits, 'fragmentChars'>;
}

/** As in callModel: a heartbeat every second (the SDK sends at most one per 0.8 × heartbeat timeout). */
const HEARTBEAT_MS = 1000;

const gone = (what: string): ApplicationFailure =>
  ApplicationFailure.create({
    type: IngestionFailure.DocumentGone,
    message: `${what} no longer exists`,
    nonRetryable: true,
  });

function classify(err: unknown): unknown {
  if (!(err instanceof EmbeddingError)) return err;
  const retryable = err.kind === 'retryable' || err.kind === 'unreachable';
  return ApplicationFailure.create({
    type: retryable ? IngestionFailure.EmbeddingUnavailable : IngestionFailure.EmbeddingRejected,
    message: `Embedding server failed: ${err.message}`,
    nonRetryable: !retryable,
    ...(err.retryAfterMs ? { nextRetryDelay: err.retryAfterMs } : {}),
  });
}

export function createIngestionActivities(deps: IngestionDeps) {
  return {
    /**
     * Splits the content and stages the fragments; returns how many there are (no text). With the
     * built-in `hash` embedder (CPU only, no server, nothing to retry) the chunks are embedded here
     * too (`embedded`), which saves reading them back and a write per fragment.
     */
    async prepareIngestion(documentVersionId: string): Promise<{ fragmentCount: number; embedded: boolean }> {
      const started = await deps.ingestions.startIngestion(documentVersionId);
      if (!started) throw gone('The document version');
      const { version, content } = started;
      const pipeline = await deps.pipelines.get(version.pipeline_id);
      const splitter = await deps.textSplitters.get(version.text_splitter_id);
      if (!pipeline || !splitter) throw gone(pipeline ? 'The text splitter' : 'The pipeline');
      const chunks = (
        await splitText(splitter.provider, splitter.parameters, content, deps.limits.fragmentChars)
      ).filter((c) => /[\p{L}\p{N}]/u.test(c));
      const model = await deps.embeddingModels.get(pipeline.embedding_model_id);
      if (!model) throw gone('The embedding model');
      const embedded = model.provider === 'hash';
      const vectors = embedded ? await (await embedderFor(deps, model)).embed(chunks) : [];
      await deps.ingestions.stageFragments(
        version,
        model.id,
        chunks.map((text, ordinal) => ({
          ordinal,
          text,
          ...(embedded ? { embedding: vectors[ordinal]! } : {}),
        })),
        pipeline.text_search_config,
      );
      return { fragmentCount: chunks.length, embedded };
    },

    /** Embeds fragments [from, from + count) that still lack an embedding. */
    async embedFragments(input: { documentVersionId: string; from: number; count: number }): Promise<void> {
      const version = await deps.ingestions.getVersion(input.documentVersionId);
      const pipeline = version && (await deps.pipelines.get(version.pipeline_id));
      if (!version || !pipeline) throw gone('The document version');
      const model = await deps.embeddingModels.get(pipeline.embedding_model_id);
      if (!model) throw gone('The embedding model');
      const pending = await deps.ingestions.unembedded(input.documentVersionId, input.from, input.count);
      if (pending.length === 0) return;
      const ctx = Context.current();
      ctx.heartbeat();
      // Beat while the embedding server works: a healthy call slower than the heartbeat timeout
      // (several server batches) would otherwise be retried while it still runs, embedding twice.
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      try {
        const vectors = await (await embedderFor(deps, model)).embed(pending.map((p) => p.text));
        await deps.ingestions.storeEmbeddings(
          pipeline.text_search_config,
          pending.map((p, i) => ({ id: p.id, text: p.text, embedding: vectors[i]! })),
        );
      } catch (err) {
        throw classify(err);
      } finally {
        clearInterval(beat);
      }
    },

    /** DOC-2: makes the version current and expires the previous one in one transaction. */
    async finishIngestion(documentVersionId: string): Promise<void> {
      await deps.ingestions.finishIngestion(documentVersionId);
    },

    async failIngestion(input: { documentVersionId: string; error: string }): Promise<void> {
      await deps.ingestions.failIngestion(input.documentVersionId, input.error);
    },
  };
}
