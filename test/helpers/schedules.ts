// The content retention schedule a test's worker created (one per task queue,
// infra/retention-schedule.ts), deleted when the test stops its stack, so schedules do not pile up
// in the dev server that many test files share.
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { retentionScheduleId } from '../../infra/retention-schedule';
import { TEMPORAL_ADDRESS } from './services';

/** Deletes the task queue's retention schedule; one already gone is fine. */
export async function deleteRetentionSchedule(taskQueue: string, client?: Client): Promise<void> {
  const temporal =
    client ?? new Client({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
  try {
    await temporal.schedule.getHandle(retentionScheduleId(taskQueue)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  } finally {
    if (!client) await temporal.connection.close();
  }
}
