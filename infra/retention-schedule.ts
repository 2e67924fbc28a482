// The deployment's content retention schedule (SPEC §9.3): one Temporal Schedule per task queue,
// `agentry-content-retention-<taskQueue>`, that starts the `contentRetention` workflow every
// AGENTRY_CONTENT_SWEEP_SECONDS. Every worker ensures it at start; the first creates it, the
// others find it (and adopt a changed interval, keeping an operator's pause). Operators see,
// pause and trigger it in the UI's Schedules page or with `temporal schedule` (docs/operations.md).
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Logger } from './logger';

export const RETENTION_WORKFLOW_TYPE = 'contentRetention';

export function retentionScheduleId(taskQueue: string): string {
  return `agentry-content-retention-${taskQueue}`;
}

interface RetentionScheduleOptions {
  taskQueue: string;
  everySeconds: number;
  logger: Logger;
}

/** Creates the schedule unless it exists; an existing one gets the configured interval. */
export async function ensureRetentionSchedule(
  client: Client,
  options: RetentionScheduleOptions,
): Promise<void> {
  const scheduleId = retentionScheduleId(options.taskQueue);
  const everyMs = options.everySeconds * 1000;
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: everyMs }] },
      action: {
        type: 'startWorkflow',
        workflowType: RETENTION_WORKFLOW_TYPE,
        workflowId: scheduleId,
        taskQueue: options.taskQueue,
        args: [],
        // A run no worker picks up ends, so the next interval's run is not skipped forever.
        workflowExecutionTimeout: Math.max(everyMs * 10, 60_000),
        staticSummary: `content retention sweep (task queue ${options.taskQueue})`,
      },
      // One sweep at a time; after an outage one catch-up run, not one per missed interval.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: Math.max(everyMs, 60_000) },
      state: { note: 'Deletes execution content past AGENTRY_CONTENT_RETENTION (docs/operations.md).' },
    });
    options.logger.info(
      { scheduleId, everySeconds: options.everySeconds },
      'content retention schedule created',
    );
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    const handle = client.schedule.getHandle(scheduleId);
    const current = (await handle.describe()).spec.intervals?.[0]?.every;
    if (current === everyMs) return;
    await handle.update((previous) => ({ ...previous, spec: { intervals: [{ every: everyMs }] } }));
    options.logger.info(
      { scheduleId, everySeconds: options.everySeconds },
      'content retention interval updated',
    );
  }
}
