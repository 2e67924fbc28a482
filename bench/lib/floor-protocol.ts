// Messages between the execution benchmark and its floor worker process (bench/lib/floor-worker.ts).
import type { ClosedLoop } from './closed-loop';

/** One floor execution as its client saw it (ms from `workflow.start()`). */
export interface FloorRun {
  workflowId: string;
  /** To the first line of the model activity: the floor's time to first token. */
  ttftMs: number;
  /** To the workflow's result. */
  totalMs: number;
  startRpcMs: number;
  /** Whether the server honoured `requestEagerStart`. */
  eager: boolean;
}

export type FloorRequest =
  | { id: number; cmd: 'one'; eager: boolean }
  | { id: number; cmd: 'loop'; clients: number; durationS: number }
  | { id: number; cmd: 'stop' };

export type FloorReply =
  | { type: 'ready'; taskQueue: string }
  | {
      type: 'reply';
      id: number;
      one?: FloorRun;
      loop?: ClosedLoop & { workflowIds: string[] };
      error?: string;
    };
