// SPEC §9.3 content retention as a Temporal Schedule (infra/retention-schedule.ts): every worker
// ensures the deployment's one schedule at start, a triggered run deletes the expired content
// (the records stay) and completes, and an operator's pause survives a worker restart.
import type { ScheduleHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { ensureRetentionSchedule, retentionScheduleId } from '../../infra/retention-schedule';
import { newId } from '../../infra/ids';
import { startWorker } from '../../start-worker';
import { startStack, type Stack } from '../helpers/stack';
import { TEMPORAL_ADDRESS } from '../helpers/services';
import { until } from '../helpers/wait';

let stack: Stack;
let scheduleId: string;
let schedule: ScheduleHandle;

beforeAll(async () => {
  // A long interval: only the test's trigger runs the sweep.
  stack = await startStack({ env: { AGENTRY_CONTENT_SWEEP_SECONDS: '3600' } });
  scheduleId = retentionScheduleId(stack.env.config.taskQueue);
  schedule = stack.temporal.schedule.getHandle(scheduleId);
});

afterAll(async () => {
  await stack?.stop();
});

/** An execution record finished with its content retained for `retentionSeconds`. */
async function finishedExecution(retentionSeconds: number): Promise<string> {
  const id = newId();
  await stack.rt.executions.create(
    { id, kind: 'llm_query', api_key_id: stack.env.adminKeyId, workflow_id: `execution-${id}` },
    { payloadId: newId(), content: { messages: [{ role: 'user', content: 'a question' }] } },
  );
  await stack.rt.executions.finish(id, { status: 'succeeded' }, retentionSeconds);
  return id;
}

const payloadRows = async (executionId: string): Promise<number> =>
  (await stack.rt.db('execution_payloads').where({ execution_id: executionId })).length;

it('a second worker on the same task queue finds the schedule: exactly one exists, on the configured interval', async () => {
  const connection = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
  const second = await startWorker(stack.rt, connection);
  await second.stop();
  await connection.close();

  const found = await until(
    async () => {
      const ids: string[] = [];
      for await (const s of stack.temporal.schedule.list())
        if (s.scheduleId === scheduleId) ids.push(s.scheduleId);
      return ids.length > 0 ? ids : undefined;
    },
    { what: 'the retention schedule in the schedule list' },
  );
  expect(found).toEqual([scheduleId]);
  const described = await schedule.describe();
  expect(described.spec.intervals).toMatchObject([{ every: 3_600_000 }]);
  expect(described.action).toMatchObject({
    type: 'startWorkflow',
    workflowType: 'contentRetention',
    taskQueue: stack.env.config.taskQueue,
  });
});

it('a triggered run deletes the expired content, keeps the rest and the records, and its workflow completes', async () => {
  const expired = await finishedExecution(0);
  const retained = await finishedExecution(3600);
  expect(await payloadRows(expired)).toBe(1);
  const before = (await schedule.describe()).info.recentActions.length;

  await schedule.trigger();
  const action = await until(async () => (await schedule.describe()).info.recentActions[before], {
    what: 'the triggered run',
  });
  const run = stack.temporal.workflow.getHandle(
    action.action.workflow.workflowId,
    action.action.workflow.firstExecutionRunId,
  );
  const result = (await run.result()) as { deleted: number };
  expect(result.deleted).toBeGreaterThanOrEqual(1);
  const described = await run.describe();
  expect(described.status.name).toBe('COMPLETED');
  expect(await described.staticSummary()).toBe(
    `content retention sweep (task queue ${stack.env.config.taskQueue})`,
  );

  expect(await payloadRows(expired)).toBe(0);
  expect(await payloadRows(retained)).toBe(1);
  expect(await stack.rt.executions.get(expired)).toMatchObject({ id: expired, status: 'succeeded' });
});

it('an operator-paused schedule stays paused when a worker starts with a new interval, which it adopts', async () => {
  await schedule.pause('maintenance');
  await ensureRetentionSchedule(stack.temporal, {
    taskQueue: stack.env.config.taskQueue,
    everySeconds: 120,
    logger: stack.rt.logger,
  });
  const described = await schedule.describe();
  expect(described.state.paused).toBe(true);
  expect(described.spec.intervals).toMatchObject([{ every: 120_000 }]);
});
