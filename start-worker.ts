// A worker on a given connection (used by worker.ts, by api/server.ts with
// AGENTRY_API_RUNS_WORKER, by embedded.ts and the test and bench stacks): activities built from
// narrow deps, the prebuilt workflow bundle (or the sources), the payload codec, metrics and
// tracing around every activity, and the deployment's content retention schedule, ensured at
// start (infra/retention-schedule.ts).
//
// Two SDK workers share the connection (docs/operations.md, "Sizing a worker"): one on the task
// queue runs the workflows, their local activities and the model calls, with a slot per model
// stream (I/O-bound: a thousand by default) and a workflow cache to match; one on the `-tasks`
// queue runs the other activities (ingestion, chains' steps, retention) with slots of their own,
// so that neither kind starves the other. Stop notices (infra/stop-notices.ts) reach the model
// streams running here.
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { Gauge, Registry } from 'prom-client';
import { createActivities } from './activities';
import { heartbeatEveryMs } from './activities/model-attempt';
import { ExecutionScratch } from './activities/execution-scratch';
import { RunningStreams } from './activities/running-streams';
import { activityMetricsInterceptor, createWorkerMetrics } from './infra/activity-metrics';
import {
  temporalActivityInterceptors,
  temporalWorkflowSinks,
  WORKFLOW_INTERCEPTORS_MODULE,
} from './infra/telemetry';
import { ensureRetentionSchedule } from './infra/retention-schedule';
import { connectTemporalClient, dataConverter, type Runtime } from './runtime';
import { WORKER_QUEUES, type WorkerQueue, type WorkerVersioning } from './infra/worker-settings';
import { tasksQueueOf } from './workflows/contracts';

export interface WorkerHandle {
  /** The SDK worker of the task queue (workflows and model calls), if this process serves it. */
  worker: Worker | undefined;
  /** Each served queue's SDK worker state (`RUNNING`, `DRAINING`, `FAILED`...), for the probes. */
  states(): Record<string, string>;
  metrics: Registry;
  /** The model streams running in this process. */
  streams: RunningStreams;
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
  const streams = new RunningStreams();
  const workerMetrics = createWorkerMetrics(registry);
  const temporal = await connectTemporalClient(rt, connection);
  const activities = createActivities({
    ...rt,
    temporal,
    contentRetentionSeconds: config.contentRetentionSeconds,
    traceTtlSeconds: config.traceTtlSeconds,
    defaultLlmId: config.defaultLlmId,
    runningStreams: streams,
    relayBatchMs: config.relayBatchMs,
    llmRetryMaxIntervalMs: config.llm.maximumIntervalMs,
    scratch: new ExecutionScratch(),
    modelResumes: workerMetrics.modelResumes,
  });
  // Before the worker exists: a refused schedule then leaves no worker behind.
  await ensureRetentionSchedule(temporal, {
    taskQueue: config.taskQueue,
    everySeconds: config.contentSweepSeconds,
    logger: rt.logger,
  });
  const stopListening = await rt.stopNotices.listen((executionId) => streams.stop(executionId));
  new Gauge({
    name: 'agentry_model_streams',
    help: 'Model streams this worker process runs now (AGENTRY_WORKER_MODEL_STREAMS at most)',
    registers: [registry],
    collect() {
      this.set(streams.size);
    },
  });
  const shared: WorkerOptions = {
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.taskQueue,
    activities,
    // Metrics (and, when on, OpenTelemetry spans) around every activity; the workflow side of
    // tracing is in the bundle (infra/telemetry-workflow.ts) and exports through `sinks`.
    interceptors: {
      activity: [activityMetricsInterceptor(workerMetrics), ...temporalActivityInterceptors()],
      workflowModules: config.workflowBundlePath ? [] : [WORKFLOW_INTERCEPTORS_MODULE],
    },
    dataConverter: dataConverter(rt),
    // The model call heartbeats at its own cadence (activities/model-attempt.ts); the SDK sends
    // each of those at once and never more often.
    maxHeartbeatThrottleInterval: heartbeatEveryMs(config.llm.heartbeatTimeoutMs),
    // After SIGTERM running activities get this long; then they are cancelled and fail, and
    // Temporal retries them elsewhere at once (docs/operations.md, "Kubernetes").
    shutdownGraceTime: config.worker.shutdownGraceMs,
    ...workerDeployment(config.worker.versioning),
  };
  const serves = (queue: WorkerQueue): boolean => config.worker.queues.includes(queue);
  const created = await Promise.all([
    serves('executions')
      ? Worker.create({
          ...shared,
          ...(config.workflowBundlePath
            ? { workflowBundle: { codePath: config.workflowBundlePath } }
            : { workflowsPath: require.resolve('./workflows') }),
          sinks: temporalWorkflowSinks(),
          maxConcurrentActivityTaskExecutions: config.workerSlots.modelStreams,
          maxCachedWorkflows: config.workerSlots.cachedWorkflows,
          maxConcurrentWorkflowTaskExecutions: 20,
          // One poll of each kind (sticky and normal): on a small machine more polls only add
          // wake-ups (docs/decisions.md, "Worker polls").
          maxConcurrentWorkflowTaskPolls: config.workflowTaskPolls,
        })
      : undefined,
    serves('tasks')
      ? Worker.create({
          ...shared,
          taskQueue: tasksQueueOf(config.taskQueue),
          maxConcurrentActivityTaskExecutions: config.workerSlots.tasks,
        })
      : undefined,
  ]);
  const workers = new Map<WorkerQueue, Worker>();
  created.forEach((w, i) => w && workers.set(WORKER_QUEUES[i]!, w));
  const shutdown = (): void => {
    for (const w of workers.values()) if (w.getState() === 'RUNNING') w.shutdown();
  };
  // One failing stops the other: a process serves all its queues or none.
  const done = Promise.all(
    [...workers.values()].map((w) =>
      w.run().catch((err: unknown) => {
        shutdown();
        throw err;
      }),
    ),
  ).then(() => undefined);
  done.finally(stopListening).catch(() => undefined);
  return {
    worker: workers.get('executions'),
    states: () => Object.fromEntries([...workers].map(([queue, w]) => [queue, w.getState()])),
    metrics: registry,
    streams,
    done,
    async stop() {
      shutdown();
      await done;
    },
  };
}

/**
 * Worker Versioning (issue 36): both SDK workers are one version of a Worker Deployment, and a
 * workflow runs to its end on the version that started it (PINNED by default), so a rollout never
 * moves a running execution to new code; old versions drain before they are scaled down.
 */
export function workerDeployment(versioning: WorkerVersioning | undefined): Partial<WorkerOptions> {
  if (!versioning) return {};
  return {
    workerDeploymentOptions: {
      useWorkerVersioning: true,
      version: { deploymentName: versioning.deploymentName, buildId: versioning.buildId },
      defaultVersioningBehavior: versioning.defaultBehavior,
    },
  };
}
