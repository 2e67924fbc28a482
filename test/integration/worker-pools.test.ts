// Issue 36: a worker process serves the queues AGENTRY_WORKER_QUEUES names, so that the model-call
// pool (the task queue: workflows and model calls) and the ingestion pool (its `-tasks` queue)
// scale apart. A tasks-only worker polls nothing on the task queue, so an ingestion waits for a
// workflow worker; an executions-only worker then runs the workflow, whose activities the
// tasks-only worker runs, and the two together ingest the document.
import type { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { connectTemporal } from '../../infra/temporal-connection';
import type { WorkerQueue } from '../../infra/worker-settings';
import type { Runtime } from '../../runtime';
import { startWorker, type WorkerHandle } from '../../start-worker';
import { documentSettled, seedPipeline } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';
import { sleep, until } from '../helpers/wait';

const { TaskQueueType } = temporal.api.enums.v1;

/** A runtime whose worker serves only `queues`. */
const serving = (rt: Runtime, queues: WorkerQueue[]): Runtime => ({
  ...rt,
  config: { ...rt.config, worker: { ...rt.config.worker, queues } },
});

describe('issue 36: worker pools, one queue each', () => {
  let stack: Stack;
  let connection: NativeConnection;
  const workers: WorkerHandle[] = [];

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    connection = await connectTemporal(stack.env.config.temporal);
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await connection?.close();
    await stack?.stop();
  });

  /** The identities polling a queue for tasks of one type, as the server saw them. */
  async function pollers(queue: string, type: number): Promise<string[]> {
    const res = await stack.temporal.workflowService.describeTaskQueue({
      namespace: stack.env.config.temporal.namespace,
      taskQueue: { name: queue },
      taskQueueType: type,
    });
    return (res.pollers ?? []).map((p) => p.identity ?? '');
  }

  it('a tasks-only worker polls only the -tasks queue; an executions-only one the task queue; together they ingest', async () => {
    const queue = stack.env.config.taskQueue;
    const tasks = await startWorker(serving(stack.rt, ['tasks']), connection);
    workers.push(tasks);
    expect(tasks.worker).toBeUndefined();
    expect(tasks.states()).toEqual({ tasks: 'RUNNING' });
    const { pipelineId } = await seedPipeline(stack.api, { name: 'pools' });
    const doc = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content: 'The rotation runbook.\nStep one: open the console.',
      classification: 'public',
    });
    expect(doc.status).toBe(202);
    await until(
      async () =>
        (await pollers(`${queue}-tasks`, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)).length > 0
          ? true
          : undefined,
      {
        what: 'the tasks worker to poll',
        timeoutMs: 10_000,
      },
    );
    // Nobody runs workflows: the ingestion waits.
    await sleep(1500);
    expect(await pollers(queue, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)).toEqual([]);
    expect(await pollers(queue, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)).toEqual([]);
    expect((await stack.api.get(`/pipelines/${pipelineId}/documents/${doc.body.id}`)).body.status).toBe(
      'pending',
    );

    const executions = await startWorker(serving(stack.rt, ['executions']), connection);
    workers.push(executions);
    expect(executions.states()).toEqual({ executions: 'RUNNING' });
    const ready = await documentSettled(stack.api, pipelineId, doc.body.id, { timeoutMs: 30_000 });
    expect(ready.status).toBe('ready');
    expect((await pollers(queue, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)).length).toBeGreaterThan(0);
  });
});
