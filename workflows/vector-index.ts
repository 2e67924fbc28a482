// An embedding model's HNSW index built or rebuilt (issue 26): one workflow per model
// (`vectorIndexWorkflowId`), started by the embedding model routes when the index's parameters
// change or a rebuild is asked for, and by the periodic sweep (content-retention.ts) for a model
// whose index is absent or stale. The build runs as one heartbeating activity; `busy` (an import
// holds the model's index lock) is retried.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { VectorIndexInput } from './contracts';
import { tasksQueue } from './activity-proxies';

export async function vectorIndexMaintenance(input: VectorIndexInput): Promise<string> {
  const { maintainVectorIndex } = proxyActivities<Pick<Activities, 'maintainVectorIndex'>>({
    taskQueue: tasksQueue(),
    // A build of a large index takes minutes; the heartbeat, not this timeout, notices a dead worker.
    startToCloseTimeout: '24 hours',
    heartbeatTimeout: '1 minute',
    retry: {
      initialInterval: '10 seconds',
      backoffCoefficient: 2,
      maximumInterval: '5 minutes',
      maximumAttempts: 20,
    },
    summary: 'build vector index',
  });
  return maintainVectorIndex(input);
}
