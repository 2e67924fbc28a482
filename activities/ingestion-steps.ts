// The steps ingestion's activities share (activities/ingest-document.ts): a version's content
// split into chunks with its pipeline, splitter and model looked up once per activity, staged
// fragments embedded and stored while the activity heartbeats, and the failures they raise.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { EmbeddingModel } from '../db/embedding-model-store';
import type { DocumentVersion } from '../db/document-version';
import { EmbeddingError } from '../infra/embedders';
import { splitText } from '../infra/text-splitters';
import { IngestionFailure } from '../workflows/contracts';
import { embedderFor } from '../services/model-embedder';
import type { IngestionStore } from '../db/ingestion-store';
import type { EmbeddingModelStore } from '../db/embedding-model-store';
import type { PipelineStore } from '../db/pipeline-store';
import type { TextSplitterStore } from '../db/text-splitter-store';
import type { VectorIndexStore } from '../db/vector-index';
import type { Limits } from '../domain/limits';
import type { SearchDeps } from '../services/search-fragments';

export interface IngestionDeps extends Pick<SearchDeps, 'embeddingModels'> {
  ingestions: IngestionStore;
  pipelines: PipelineStore;
  textSplitters: TextSplitterStore;
  embeddingModels: EmbeddingModelStore;
  vectorIndexes: VectorIndexStore;
  /** SPEC §18: no fragment longer than the configured fragment limit. */
  limits: Pick<Limits, 'fragmentChars'>;
}

/** As in callModel: a heartbeat every second (the SDK sends at most one per 0.8 × heartbeat timeout). */
export const HEARTBEAT_MS = 1000;

export const gone = (what: string): ApplicationFailure =>
  ApplicationFailure.create({
    type: IngestionFailure.DocumentGone,
    message: `${what} no longer exists`,
    nonRetryable: true,
  });

export function classify(err: unknown): unknown {
  if (!(err instanceof EmbeddingError)) return err;
  const retryable = err.kind === 'retryable' || err.kind === 'unreachable';
  return ApplicationFailure.create({
    type: retryable ? IngestionFailure.EmbeddingUnavailable : IngestionFailure.EmbeddingRejected,
    message: `Embedding server failed: ${err.message}`,
    nonRetryable: !retryable,
    ...(err.retryAfterMs ? { nextRetryDelay: err.retryAfterMs } : {}),
  });
}

/** Embeds staged fragments and stores their embeddings, heartbeating while the server works. */
export async function embedStaged(
  deps: Pick<IngestionDeps, 'embeddingModels' | 'ingestions'>,
  textSearchConfig: string,
  model: EmbeddingModel,
  pending: { id: string; text: string }[],
): Promise<void> {
  if (pending.length === 0) return;
  const ctx = Context.current();
  ctx.heartbeat();
  // Beat while the embedding server works: a healthy call slower than the heartbeat timeout
  // (several server batches) would otherwise be retried while it still runs, embedding twice.
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  try {
    const vectors = await (await embedderFor(deps, model)).embed(pending.map((p) => p.text));
    await deps.ingestions.storeEmbeddings(
      textSearchConfig,
      pending.map((p, i) => ({ id: p.id, text: p.text, embedding: vectors[i]! })),
    );
  } catch (err) {
    throw classify(err);
  } finally {
    clearInterval(beat);
  }
}

/**
 * Chunks of a version's content, with the lookups of its pipeline, splitter and model (and the
 * model's embedder) cached for one activity.
 */
export function versionSplitter(deps: IngestionDeps, cache = new Map<string, Promise<unknown>>()) {
  const once = <T>(key: string, load: () => Promise<T>): Promise<T> => {
    if (!cache.has(key)) cache.set(key, load());
    return cache.get(key) as Promise<T>;
  };
  return async (version: DocumentVersion, content: string) => {
    const pipeline = await once(`p:${version.pipeline_id}`, () => deps.pipelines.get(version.pipeline_id));
    const textSplitter = await once(`s:${version.text_splitter_id}`, () =>
      deps.textSplitters.get(version.text_splitter_id),
    );
    if (!pipeline || !textSplitter) throw gone(pipeline ? 'The text splitter' : 'The pipeline');
    const model = await once(`m:${pipeline.embedding_model_id}`, () =>
      deps.embeddingModels.get(pipeline.embedding_model_id),
    );
    if (!model) throw gone('The embedding model');
    const chunks = (
      await splitText(textSplitter.provider, textSplitter.parameters, content, deps.limits.fragmentChars)
    ).filter((c) => /[\p{L}\p{N}]/u.test(c));
    const embedder = () => once(`e:${model.id}`, () => embedderFor(deps, model));
    return { pipeline, model, chunks, embedder };
  };
}
