// Document ingestion activities (SPEC §5): split and stage, embed a range of fragments, make the
// version current, or record its failure. Each may run twice (DOC-3): staging ignores rows that
// exist, embedding skips fragments that have one, finishing is a no-op once ready.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { IngestionStore } from '../db/ingestion-store';
import type { EmbeddingModel } from '../db/embedding-model-store';
import { IngestionFailure } from '../workflows/contracts';
import { embedderFor } from '../services/model-embedder';
import { embedStaged, gone, HEARTBEAT_MS, versionSplitter, type IngestionDeps } from './ingestion-steps';

/** What a group of a batch left to the workflow: staged versions to embed, and indexes to build. */
interface IngestedGroup {
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
  const embedAndStore = (
    textSearchConfig: string,
    model: EmbeddingModel,
    pending: { id: string; text: string }[],
  ) => embedStaged(deps, textSearchConfig, model, pending);

  return {
    /**
     * One group of a batch (issue 15): takes the batch's versions from position `from` on until
     * about GROUP_FRAGMENTS fragments. Versions of the built-in embedder are embedded and made
     * ready here, in a few statements for the whole group (their model's index deferred first when
     * the load is large); the others are staged for `embedStaged`. A version whose pipeline,
     * splitter or model is gone fails alone; ready or failed versions (a retry) are skipped.
     */
    async ingestDocuments(input: { batchId: string; from: number }): Promise<IngestedGroup> {
      const split = versionSplitter(deps);
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
          let prepared: Awaited<ReturnType<ReturnType<typeof versionSplitter>>>;
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
      const { pipeline, model, chunks } = await versionSplitter(deps)(started.version, started.content);
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
