// One periodic sweep, started by the deployment's Temporal Schedule
// (infra/retention-schedule.ts): the content retention delete as an activity, so each run's
// outcome and the number of rows it deleted are in the run's history, and a failed run shows in
// the UI; then the vector index check (issue 26): a `vectorIndexMaintenance` workflow for each
// embedding model whose index is absent with no import running (one a terminated import dropped),
// stale, or half rebuilt. Started as abandoned children: the sweep does not wait for a build.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, patched, proxyActivities, startChild } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { vectorIndexWorkflowId } from './contracts';
import { tasksQueue } from './activity-proxies';
import { vectorIndexMaintenance } from './vector-index';

const sweep = (summary: string) =>
  proxyActivities<Pick<Activities, 'deleteExpiredContent' | 'vectorIndexesToMaintain'>>({
    taskQueue: tasksQueue(),
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 3 },
    summary,
  });

export async function contentRetention(): Promise<{ deleted: number; indexes?: number }> {
  const { deleteExpiredContent } = sweep('delete expired content');
  const { vectorIndexesToMaintain } = sweep('find vector indexes to build');
  const result = await deleteExpiredContent();
  // Sweeps recorded before the index check replay without it.
  if (!patched('vector-index-sweep')) return result;
  const due = await vectorIndexesToMaintain();
  for (const embeddingModelId of due) {
    await startChild(vectorIndexMaintenance, {
      workflowId: vectorIndexWorkflowId(embeddingModelId),
      args: [{ embeddingModelId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    }).catch((err: unknown) => {
      // A build of that model already runs.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    });
  }
  return due.length > 0 ? { ...result, indexes: due.length } : result;
}
