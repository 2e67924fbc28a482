// The embedding models' HNSW indexes kept at their parameters (issue 26). `maintainVectorIndex`
// builds a model's absent index or rebuilds it beside the old one (db/vector-index.ts,
// `reconcile`): run by the `vectorIndexMaintenance` workflow that the embedding model routes start
// when `index.m` / `index.ef_construction` change or a rebuild is asked for, and that the periodic
// sweep (workflows/content-retention.ts) starts for each model `vectorIndexesToMaintain` names,
// e.g. one whose index an import dropped and, terminated, never built.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { EmbeddingModelStore } from '../db/embedding-model-store';
import type { IndexOutcome, VectorIndexStore } from '../db/vector-index';
import { batchIngestionWorkflowId, type VectorIndexInput } from '../workflows/contracts';

export interface VectorIndexDeps {
  embeddingModels: EmbeddingModelStore;
  vectorIndexes: VectorIndexStore;
  /** Tells whether an import's workflow still runs. */
  temporal: Pick<Client, 'workflow'>;
}

const HEARTBEAT_MS = 5_000;
/**
 * An import whose documents changed this recently may still be loading (between two batches, or
 * its last batch about to build the index): its index is left to it. 2 minutes: a group of 1,000
 * fragments takes seconds, and the sweep comes every minute.
 */
const IMPORT_QUIET_MS = 120_000;
/** Parameters changed while a rebuild ran are taken by the next pass, up to this many. */
const PASSES = 3;

export function createVectorIndexActivities(deps: VectorIndexDeps) {
  /**
   * Whether an import of the model is running: its last batch builds the index it deferred
   * (activities/ingest-document.ts). A batch whose workflow ended without finishing (terminated,
   * timed out) and left its documents pending builds nothing, so once they have been still for
   * IMPORT_QUIET_MS the index is built here.
   */
  const importRunning = async (modelId: string): Promise<boolean> => {
    const { batches, recent } = await deps.vectorIndexes.loading(modelId, IMPORT_QUIET_MS);
    if (recent) return true;
    for (const batchId of batches) {
      try {
        const run = await deps.temporal.workflow.getHandle(batchIngestionWorkflowId(batchId)).describe();
        if (run.status.name === 'RUNNING') return true;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    }
    return false;
  };

  return {
    /** Builds or rebuilds the model's index (heartbeating meanwhile); retried while `busy`. */
    async maintainVectorIndex(input: VectorIndexInput): Promise<IndexOutcome | 'gone' | 'loading'> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      try {
        let outcome: IndexOutcome = 'ready';
        let rebuild = input.rebuild === true;
        for (let pass = 0; pass < PASSES; pass++) {
          const model = await deps.embeddingModels.get(input.embeddingModelId);
          if (!model) return 'gone';
          const state = await deps.vectorIndexes.inOrder(model);
          if (state === true && !rebuild) return outcome;
          if (state === 'absent' && (await importRunning(model.id))) return 'loading';
          outcome = await deps.vectorIndexes.reconcile(model, rebuild);
          if (outcome === 'busy')
            throw ApplicationFailure.retryable('Another session is building the index', 'VectorIndex.Busy');
          rebuild = false;
        }
        return outcome;
      } finally {
        clearInterval(beat);
      }
    },

    /** The models whose index is absent (no import running), stale, or has a rebuild's left beside it. */
    async vectorIndexesToMaintain(): Promise<string[]> {
      const due: string[] = [];
      for (const model of await deps.embeddingModels.indexParameters()) {
        const state = await deps.vectorIndexes.inOrder(model);
        if (state === true || (state === 'absent' && (await importRunning(model.id)))) continue;
        due.push(model.id);
      }
      return due;
    },
  };
}
