// The streams floor's worker (issue 35): the SDK's Worker running bench/lib/stream-floor-workflow.ts
// and its one activity, which streams the model with the openai SDK (the Responses protocol, as
// Agentry's model activity) and publishes each delta to the bus, heartbeating as a durable stream
// must, with Agentry's settings (bench/lib/stream-floor-settings.ts).
import { Context } from '@temporalio/activity';
import { bundleWorkflowCode, type NativeConnection, Worker } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
import { SYSTEM } from './stream-clients';
import { DONE, type Bus } from './stream-floor-bus';
import { FLOOR_SETTINGS } from './stream-floor-settings';
import type { FloorActivities, FloorChat } from './stream-floor-workflow';

/** The activity: a retry starts the answer over (`reset`), the last failed attempt says so. */
export function floorActivities(bus: Bus, modelUrl: string): FloorActivities {
  const openai = new OpenAI({ apiKey: 'sk-bench', baseURL: modelUrl, maxRetries: 0, timeout: 24 * 3600_000 });
  return {
    async streamModel(chat: FloorChat): Promise<void> {
      const ctx = Context.current();
      const publish = (event: object) => bus.publish(chat.channel, JSON.stringify(event));
      ctx.heartbeat();
      const beats = setInterval(() => ctx.heartbeat(), FLOOR_SETTINGS.heartbeatEveryMs);
      try {
        if (ctx.info.attempt > 1) await publish({ type: 'reset' });
        const stream = await openai.responses.create(
          {
            model: chat.model,
            input: [
              { role: 'system', content: SYSTEM },
              { role: 'user', content: chat.question },
            ],
            stream: true,
          },
          { signal: ctx.cancellationSignal },
        );
        for await (const event of stream)
          if (event.type === 'response.output_text.delta')
            await publish({ type: 'delta', text: event.delta });
        await bus.publish(chat.channel, DONE);
      } catch (err) {
        if (ctx.info.attempt >= chat.maxAttempts)
          await publish({ type: 'error', detail: (err as Error).message }).catch(() => undefined);
        throw err;
      } finally {
        clearInterval(beats);
      }
    },
  };
}

/** Bundles the floor's workflow into `file`: its worker loads it as Agentry's loads its prebuilt one. */
export async function bundleFloorWorkflow(file: string): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./stream-floor-workflow'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error },
  });
  writeFileSync(file, code);
}

/** Starts the worker on `taskQueue` with the bundle in `bundlePath`; `stop()` shuts it down. */
export async function startFloorWorker(
  connection: NativeConnection,
  taskQueue: string,
  bundlePath: string,
  bus: Bus,
  modelUrl: string,
) {
  const { maxHeartbeatThrottleIntervalMs, ...options } = FLOOR_SETTINGS.worker;
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: bundlePath },
    activities: floorActivities(bus, modelUrl),
    maxHeartbeatThrottleInterval: maxHeartbeatThrottleIntervalMs,
    ...options,
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
