// Starting the ingestion of stored document versions (SPEC §5): one `documentIngestion` workflow
// per version, started with ids only, the DX-5 pipeline search attribute and a summary of ids. A version whose
// workflow cannot start is marked failed and the request answers 503.
import type { Client } from '@temporalio/client';
import type { DocumentVersion } from '../db/document-store';
import type { IngestionStore } from '../db/ingestion-store';
import { Unavailable } from '../domain/errors';
import type { Logger } from '../infra/logger';
import { ingestionWorkflowId, type IngestionProfile } from '../workflows/contracts';
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
  for (const version of versions) {
    try {
      await deps.temporal.workflow.start('documentIngestion', {
        taskQueue: deps.taskQueue,
        workflowId: ingestionWorkflowId(version.versionId),
        args: [{ documentVersionId: version.versionId, profile: deps.ingestion }],
        typedSearchAttributes: [{ key: SearchAttributes.PipelineId, value: version.pipeline_id }],
        ...workflowMetadata({
          kind: 'ingestion',
          pipeline: { id: version.pipeline_id },
          documentVersionId: version.versionId,
        }),
      });
    } catch (err) {
      deps.logger.error(
        { err: (err as Error).message, documentVersionId: version.versionId },
        'could not start ingestion',
      );
      await deps.ingestions
        .failIngestion(version.versionId, 'Ingestion could not start: Temporal unavailable')
        .catch(() => undefined);
      throw new Unavailable('Could not start the ingestion: Temporal is unavailable');
    }
  }
}
