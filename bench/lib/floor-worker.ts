// The bare-Temporal floor of the execution benchmark, in a process of its own (forked by
// bench/lib/floor.ts, driven over IPC) so that its CPU is counted apart from Agentry's: a bare SDK
// worker on a task queue of its own running bench/lib/floor-workflow.ts with no-op activities,
// and the clients that start it. Time to first token = `workflow.start()` → the first line of the
// model activity (performance.now() in this one process); total = → the workflow's result.
// Two clients: a gRPC `Connection` as the production API has, and one on the worker's
// `NativeConnection` with `requestEagerStart` (the embedded mode's shortcut).
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { closedLoop } from './closed-loop';
import { TEMPORAL_ADDRESS, nowMs } from './env';
import type { FloorReply, FloorRequest, FloorRun } from './floor-protocol';
import type { FloorActivities, FloorInput } from './floor-workflow';

Runtime.install({ logger: new DefaultLogger('WARN') });

/** Worker options of the notes' floor runs (DESIGN §6: "recommended"); BENCH_FLOOR_WORKER_OPTIONS (JSON) overrides. */
const WORKER_OPTIONS = {
  maxConcurrentWorkflowTaskPolls: 2,
  maxConcurrentActivityTaskPolls: 1,
  ...(JSON.parse(process.env.BENCH_FLOOR_WORKER_OPTIONS ?? '{}') as Record<string, unknown>),
};

const modelStarted = new Map<string, number>();

const activities: FloorActivities = {
  retrieve: async ({ executionId }) =>
    Array.from({ length: 5 }, (_, i) => ({ id: `${executionId}-f${i}`, score: 1 - i / 10 })),
  render: async ({ executionId }) => ({ renderedPayloadId: `${executionId}-rendered` }),
  trace: async () => undefined,
  callModel: async ({ executionId }) => {
    modelStarted.set(executionId, performance.now());
    return { answerPayloadId: `${executionId}-answer` };
  },
  finish: async () => undefined,
};

const send = (reply: FloorReply) => process.send!(reply);

async function main(): Promise<void> {
  const suffix = randomBytes(4).toString('hex');
  const taskQueue = `bench-floor-${suffix}`;
  const native = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
  const grpc = await Connection.connect({ address: TEMPORAL_ADDRESS });
  const plainClient = new Client({ connection: grpc });
  const eagerClient = new Client({ connection: native as unknown as Connection });
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./floor-workflow'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error },
  });
  const worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowBundle: { code },
    activities,
    ...WORKER_OPTIONS,
  });
  const running = worker.run();

  let seq = 0;
  async function runOne(eager: boolean): Promise<FloorRun> {
    const executionId = `${suffix}-${seq++}`;
    const workflowId = `floor-${executionId}`;
    const input: FloorInput = {
      executionId,
      agentId: '00000000-0000-4000-8000-000000000001',
      pipelineId: '00000000-0000-4000-8000-000000000002',
      llmId: '00000000-0000-4000-8000-000000000003',
      requestPayloadId: `${executionId}-request`,
      placeholders: ['context'],
      trace: process.env.BENCH_TRACING === '1',
    };
    const t0 = performance.now();
    const handle = await (eager ? eagerClient : plainClient).workflow.start('floorExecution', {
      taskQueue,
      workflowId,
      args: [input],
      ...(eager ? { requestEagerStart: true } : {}),
    });
    const t1 = performance.now();
    await handle.result();
    const t2 = performance.now();
    const started = modelStarted.get(executionId);
    modelStarted.delete(executionId);
    if (started === undefined) throw new Error(`${workflowId}: the model activity did not run here`);
    return {
      workflowId,
      ttftMs: started - t0,
      totalMs: t2 - t0,
      startRpcMs: t1 - t0,
      eager: handle.eagerlyStarted === true,
    };
  }

  process.on('message', (request: FloorRequest) => {
    void (async () => {
      try {
        if (request.cmd === 'one') {
          send({ type: 'reply', id: request.id, one: await runOne(request.eager) });
        } else if (request.cmd === 'loop') {
          const workflowIds: string[] = [];
          const loop = await closedLoop(
            request.clients,
            nowMs() + request.durationS * 1000,
            () => false,
            async () => {
              const run = await runOne(false);
              if (workflowIds.length < 50) workflowIds.push(run.workflowId);
              return run;
            },
          );
          send({ type: 'reply', id: request.id, loop: { ...loop, workflowIds } });
        } else {
          worker.shutdown();
          await running;
          await grpc.close();
          await native.close();
          send({ type: 'reply', id: request.id });
          process.disconnect();
        }
      } catch (err) {
        send({ type: 'reply', id: request.id, error: (err as Error).stack ?? String(err) });
      }
    })();
  });
  send({ type: 'ready', taskQueue });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
