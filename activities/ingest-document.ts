// Document ingestion activities (SPEC §5): split and stage, embed a range of fragments, make the
// version current, or record its failure. Each may run twice (DOC-3): staging ignores rows that
// exist, embedding skips fragments that have one, finishing is a no-op once ready.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { IngestionStore } from '../db/ingestion-store';
import type { EmbeddingModel, EmbeddingModelStore } from '../db/embedding-model-store';
import type { DocumentVersion } from '../db/document-version';
import type { PipelineStore } from '../db/pipeline-store';
import type { TextSplitterStore } from '../db/text-splitter-store';
import type { VectorIndexStore } from '../db/vector-index';
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
  vectorIndexes: VectorIndexStore;
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

/** What a group of a batch left to the workflow: staged versions to embed, and indexes to build. */
export interface IngestedGroup {
  /** How many of the batch's versions this group took; 0 once none is left. */
  consumed: number;
  /** Versions staged for an embedding server, with their fragment counts. */
  staged: { documentVersionId: string; fragmentCount: number }[];
  /** Embedding models whose index is absent (deferred for this load): build after the batch. */
  indexesToBuild: string[];
}

/**
 * A group of a batch holds about this many fragments: large enough that a statement carries many
 * rows (groups of 1,000 and 2,000 loaded 100k fragments equally fast), small enough that a retry
 * redoes little and that progress moves (docs/decisions.md).
 */
const GROUP_FRAGMENTS = 1000;
/** Documents read (and decrypted) at once while a group fills. */
const READ_DOCUMENTS = 100;

type ReadyLoad = Parameters<IngestionStore['loadVersions']>[2][number];

export function createIngestionActivities(deps: IngestionDeps) {
  /** Embeds staged fragments and stores their embeddings, heartbeating while the server works. */
  const embedAndStore = async (
    textSearchConfig: string,
    model: EmbeddingModel,
    pending: { id: string; text: string }[],
  ): Promise<void> => {
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
  };

  /**
   * Chunks of a version's content, with the lookups of its pipeline, splitter and model (and the
   * model's embedder) cached for one activity.
   */
  const splitter = (cache = new Map<string, Promise<unknown>>()) => {
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
  };

  return {
    /**
     * One group of a batch (issue 15): takes the batch's versions from position `from` on until
     * about GROUP_FRAGMENTS fragments. Versions of the built-in embedder are embedded and made
     * ready here, in a few statements for the whole group (their model's index deferred first when
     * the load is large); the others are staged for `embedStaged`. A version whose pipeline,
     * splitter or model is gone fails alone; ready or failed versions (a retry) are skipped.
     */
    async ingestDocuments(input: { batchId: string; from: number }): Promise<IngestedGroup> {
      const split = splitter();
      const staged: IngestedGroup['staged'] = [];
      const indexesToBuild = new Set<string>();
      const deferred = new Map<string, Promise<void>>();
      const unread = (await deps.ingestions.batchDocumentCount(input.batchId)) - input.from;
      // Each read's documents are written while the next read's are split and embedded (the
      // database and this process work at the same time); the writes stay in order.
      let writing: Promise<void> = Promise.resolve();
      let writeFailed = false;
      let consumed = 0;
      let fragments = 0;
      while (fragments < GROUP_FRAGMENTS && !writeFailed) {
        const ids = await deps.ingestions.batchVersionIds(
          input.batchId,
          input.from + consumed,
          READ_DOCUMENTS,
        );
        if (ids.length === 0) break;
        Context.current().heartbeat();
        consumed += ids.length;
        const loads = new Map<string, { modelId: string; config: string; versions: ReadyLoad[] }>();
        for (const { version, content } of await deps.ingestions.startIngestions(ids)) {
          if (version.status !== 'processing') continue;
          let prepared: Awaited<ReturnType<ReturnType<typeof splitter>>>;
          try {
            prepared = await split(version, content);
          } catch (err) {
            if (!(err instanceof ApplicationFailure) || err.type !== IngestionFailure.DocumentGone) throw err;
            await deps.ingestions.failIngestion(version.versionId, err.message);
            continue;
          }
          const { pipeline, model, chunks, embedder } = prepared;
          fragments += chunks.length;
          if (model.provider !== 'hash') {
            await deps.ingestions.stageFragments(
              version,
              model.id,
              chunks.map((text, ordinal) => ({ ordinal, text })),
            );
            staged.push({ documentVersionId: version.versionId, fragmentCount: chunks.length });
            continue;
          }
          const vectors = await (await embedder()).embed(chunks);
          const key = `${model.id}:${pipeline.text_search_config}`;
          const load = loads.get(key) ?? {
            modelId: model.id,
            config: pipeline.text_search_config,
            versions: [],
          };
          loads.set(key, load);
          load.versions.push({
            versionId: version.versionId,
            chunks: chunks.map((text, ordinal) => ({ ordinal, text, embedding: vectors[ordinal]! })),
          });
        }
        for (const { modelId, config, versions } of loads.values()) {
          // Decided once per model, before its first write: the load is at least these fragments
          // and one per document of the batch not read yet.
          const incoming = fragments + Math.max(0, unread - consumed);
          if (!deferred.has(modelId))
            deferred.set(
              modelId,
              writing.then(async () => {
                if (await deps.vectorIndexes.deferForLoad(modelId, incoming)) indexesToBuild.add(modelId);
              }),
            );
          writing = writing
            .then(() => deferred.get(modelId))
            .then(() => deps.ingestions.loadVersions(modelId, config, versions));
        }
        // A failed write stops the reads; it fails the activity below.
        writing.catch(() => (writeFailed = true));
      }
      await writing;
      return { consumed, staged, indexesToBuild: [...indexesToBuild] };
    },

    /**
     * Embeds the staged fragments of several versions that lack one among positions
     * [from, from + count) of their fragments: one range of a batch, sent to the embedding server
     * in its batch size whatever the documents' sizes.
     */
    async embedStaged(input: { documentVersionIds: string[]; from: number; count: number }): Promise<void> {
      const first = await deps.ingestions.getVersion(input.documentVersionIds[0]!);
      const pipeline = first && (await deps.pipelines.get(first.pipeline_id));
      if (!pipeline) throw gone('The pipeline');
      const model = await deps.embeddingModels.get(pipeline.embedding_model_id);
      if (!model) throw gone('The embedding model');
      const pending = await deps.ingestions.unembeddedOf(input.documentVersionIds, input.from, input.count);
      await embedAndStore(pipeline.text_search_config, model, pending);
    },

    /**
     * Staged versions become ready together (DOC-2 for each), their model's index deferred first
     * when the load is large; returns the models whose index is absent.
     */
    async finishIngestions(input: { documentVersionIds: string[] }): Promise<{ indexesToBuild: string[] }> {
      const versions = await deps.ingestions.stagedVersions(input.documentVersionIds);
      const indexesToBuild = new Set<string>();
      for (const [modelId, fragmentCount] of versions)
        if (await deps.vectorIndexes.deferForLoad(modelId, fragmentCount)) indexesToBuild.add(modelId);
      await deps.ingestions.finishIngestions(input.documentVersionIds);
      return { indexesToBuild: [...indexesToBuild] };
    },

    /** What an unexpected failure of a batch leaves: its versions not yet ready fail with `error`. */
    async failBatch(input: { batchId: string; error: string }): Promise<void> {
      await deps.ingestions.failBatch(input.batchId, input.error);
    },

    /** Versions whose staged fragments are not all embedded fail with `error`; returns them. */
    async failUnembedded(input: { documentVersionIds: string[]; error: string }): Promise<string[]> {
      const failed = await deps.ingestions.withUnembedded(input.documentVersionIds);
      for (const id of failed) await deps.ingestions.failIngestion(id, input.error);
      return failed;
    },

    /**
     * Builds an embedding model's index deferred by large loads once no batch of its pipelines is
     * left to ingest (the last one builds it), heartbeating while PostgreSQL builds it.
     */
    async buildVectorIndex(input: {
      embeddingModelId: string;
    }): Promise<'built' | 'ready' | 'busy' | 'loading'> {
      if (await deps.ingestions.batchesInFlight(input.embeddingModelId)) return 'loading';
      const model = await deps.embeddingModels.get(input.embeddingModelId);
      if (!model) return 'ready';
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      try {
        return await deps.vectorIndexes.buildIfAbsent(model);
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * Splits the content and stages the fragments; returns how many there are (no text). With the
     * built-in `hash` embedder (CPU only, no server, nothing to retry) the chunks are embedded here
     * too (`embedded`), which saves reading them back and a write per fragment.
     */
    async prepareIngestion(documentVersionId: string): Promise<{ fragmentCount: number; embedded: boolean }> {
      const started = await deps.ingestions.startIngestion(documentVersionId);
      if (!started) throw gone('The document version');
      const { pipeline, model, chunks } = await splitter()(started.version, started.content);
      const embedded = model.provider === 'hash';
      const vectors = embedded ? await (await embedderFor(deps, model)).embed(chunks) : [];
      await deps.ingestions.stageFragments(
        started.version,
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
      await embedAndStore(pipeline.text_search_config, model, pending);
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
