// One content retention sweep, started by the deployment's Temporal Schedule
// (infra/retention-schedule.ts): the delete as an activity, so each run's outcome and the
// number of rows it deleted are in the run's history, and a failed run shows in the UI.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { tasksQueue } from './activity-proxies';

export async function contentRetention(): Promise<{ deleted: number }> {
  const { deleteExpiredContent } = proxyActivities<Pick<Activities, 'deleteExpiredContent'>>({
    taskQueue: tasksQueue(),
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 3 },
    summary: 'delete expired content',
  });
  return deleteExpiredContent();
}
