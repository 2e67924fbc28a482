// A worker on a given connection (used by worker.ts, by api/server.ts with
// AGENTRY_API_RUNS_WORKER, by embedded.ts and the test and bench stacks): activities built from
// narrow deps, the prebuilt workflow bundle (or the sources), the payload codec, metrics and
// tracing around every activity, and the deployment's content retention schedule, ensured at
// start (infra/retention-schedule.ts).
import { Worker, type NativeConnection } from '@temporalio/worker';
import { Registry } from 'prom-client';
import { createActivities } from './activities';
import { activityMetricsInterceptor, createWorkerMetrics } from './infra/activity-metrics';
import {
  temporalActivityInterceptors,
  temporalWorkflowSinks,
  WORKFLOW_INTERCEPTORS_MODULE,
} from './infra/telemetry';
import { ensureRetentionSchedule } from './infra/retention-schedule';
import { connectTemporalClient, dataConverter, type Runtime } from './runtime';

export interface WorkerHandle {
  worker: Worker;
  metrics: Registry;
  /** Resolves when the worker stopped. */
  done: Promise<void>;
  stop(): Promise<void>;
}

export async function startWorker(
  rt: Runtime,
  connection: NativeConnection,
  registry = new Registry(),
): Promise<WorkerHandle> {
  const { config } = rt;
  const activities = createActivities({
    ...rt,
    contentRetentionSeconds: config.contentRetentionSeconds,
    traceTtlSeconds: config.traceTtlSeconds,
    defaultLlmId: config.defaultLlmId,
  });
  // Before the worker exists: a refused schedule then leaves no worker behind.
  await ensureRetentionSchedule(await connectTemporalClient(rt, connection), {
    taskQueue: config.taskQueue,
    everySeconds: config.contentSweepSeconds,
    logger: rt.logger,
  });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.taskQueue,
    ...(config.workflowBundlePath
      ? { workflowBundle: { codePath: config.workflowBundlePath } }
      : { workflowsPath: require.resolve('./workflows') }),
    activities,
    // Metrics (and, when on, OpenTelemetry spans) around every activity; the workflow side of
    // tracing is in the bundle (infra/telemetry-workflow.ts) and exports through `sinks`.
    interceptors: {
      activity: [
        activityMetricsInterceptor(createWorkerMetrics(registry)),
        ...temporalActivityInterceptors(),
      ],
      workflowModules: config.workflowBundlePath ? [] : [WORKFLOW_INTERCEPTORS_MODULE],
    },
    sinks: temporalWorkflowSinks(),
    dataConverter: dataConverter(rt),
    maxHeartbeatThrottleInterval: '1 second',
    maxConcurrentActivityTaskExecutions: 100,
    maxConcurrentWorkflowTaskExecutions: 20,
    // One poll of each kind (sticky and normal): on a small machine more polls only add wake-ups
    // (docs/decisions.md, "Worker polls").
    maxConcurrentWorkflowTaskPolls: config.workflowTaskPolls,
    shutdownGraceTime: '30 seconds',
  });
  const done = worker.run();
  return {
    worker,
    metrics: registry,
    done,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
