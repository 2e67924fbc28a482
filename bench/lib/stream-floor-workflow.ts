// The streams benchmark's floor (issue 35): the bare Temporal design of a streamed chat, one
// workflow whose one activity streams the model into the pub/sub channel its API listens on
// (bench/lib/stream-floor-worker.ts). Bundled by the worker; its activity options come with the
// input, the worker's copy of Agentry's LLM profile (what a workflow cannot read from the
// environment).
import type { ActivityOptions } from '@temporalio/common';
import { proxyActivities } from '@temporalio/workflow';

export interface FloorChat {
  /** The pub/sub channel the deltas go to. */
  channel: string;
  model: string;
  question: string;
  /** The last attempt publishes an error event instead of leaving the client waiting. */
  maxAttempts: number;
}

export interface FloorActivities {
  streamModel(chat: FloorChat): Promise<void>;
}

export async function floorChat(chat: FloorChat, options: ActivityOptions): Promise<void> {
  await proxyActivities<FloorActivities>(options).streamModel(chat);
}
