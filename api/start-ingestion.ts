// Starting the ingestion of stored document versions (SPEC §5): a `documentIngestion` workflow for
// a document, a `documentBatchIngestion` workflow for a batch (issue 15), started with ids only, the
// DX-5 pipeline search attribute and a summary of ids. Versions whose workflow cannot start are
// marked failed and the request answers 503.
import type { Client } from '@temporalio/client';
import type { DocumentVersion } from '../db/document-version';
import type { IngestionStore } from '../db/ingestion-store';
import { Unavailable } from '../domain/errors';
import type { Logger } from '../infra/logger';
import { batchIngestionWorkflowId, ingestionWorkflowId, type IngestionProfile } from '../workflows/contracts';
import { SearchAttributes } from '../workflows/search-attributes';
import { workflowMetadata } from '../workflows/user-metadata';

export interface StartIngestionDeps {
  logger: Logger;
  ingestions: IngestionStore;
  temporal: Client;
  taskQueue: string;
  ingestion: IngestionProfile;
}

export async function startIngestion(deps: StartIngestionDeps, versions: DocumentVersion[]): Promise<void> {
  for (const version of versions)
    await started(deps, [version], () =>
      deps.temporal.workflow.start('documentIngestion', {
        taskQueue: deps.taskQueue,
        workflowId: ingestionWorkflowId(version.versionId),
        args: [{ documentVersionId: version.versionId, profile: deps.ingestion }],
        typedSearchAttributes: [{ key: SearchAttributes.PipelineId, value: version.pipeline_id }],
        ...workflowMetadata({
          kind: 'ingestion',
          pipeline: { id: version.pipeline_id },
          documentVersionId: version.versionId,
        }),
      }),
    );
}

/** One workflow for the versions of a batch (created with `batchId`). */
export async function startBatchIngestion(
  deps: StartIngestionDeps,
  batchId: string,
  versions: DocumentVersion[],
): Promise<void> {
  const pipelineId = versions[0]!.pipeline_id;
  await started(deps, versions, () =>
    deps.temporal.workflow.start('documentBatchIngestion', {
      taskQueue: deps.taskQueue,
      workflowId: batchIngestionWorkflowId(batchId),
      args: [{ batchId, profile: deps.ingestion }],
      typedSearchAttributes: [{ key: SearchAttributes.PipelineId, value: pipelineId }],
      ...workflowMetadata({
        kind: 'ingestion_batch',
        pipeline: { id: pipelineId },
        batch: { id: batchId, documents: versions.length },
      }),
    }),
  );
}

/** Runs `start`; when Temporal refuses, the versions fail and the request answers 503. */
async function started(deps: StartIngestionDeps, versions: DocumentVersion[], start: () => Promise<unknown>) {
  try {
    await start();
  } catch (err) {
    deps.logger.error(
      { err: (err as Error).message, documentVersionIds: versions.map((v) => v.versionId) },
      'could not start ingestion',
    );
    for (const version of versions)
      await deps.ingestions
        .failIngestion(version.versionId, 'Ingestion could not start: Temporal unavailable')
        .catch(() => undefined);
    throw new Unavailable('Could not start the ingestion: Temporal is unavailable');
  }
}
