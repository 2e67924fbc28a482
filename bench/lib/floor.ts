// The execution benchmark's side of the bare-Temporal floor: forks bench/lib/floor-worker.js (its
// own worker, task queue and clients in a process of its own) and asks it over IPC for one
// sequential execution or a closed loop of concurrent ones.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ClosedLoop } from './closed-loop';
import type { FloorReply, FloorRequest, FloorRun } from './floor-protocol';
import { stopChild } from './processes';

export interface Floor {
  child: ChildProcess;
  taskQueue: string;
  one(eager: boolean): Promise<FloorRun>;
  loop(clients: number, durationS: number): Promise<ClosedLoop & { workflowIds: string[] }>;
  stop(): Promise<void>;
}

type Request = FloorRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;
type Pending = (reply: Extract<FloorReply, { type: 'reply' }>) => void;

export async function startFloor(): Promise<Floor> {
  const child = fork(path.join(__dirname, 'floor-worker.js'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, Pending>();
  let nextId = 0;
  const taskQueue = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the floor worker exited with ${code} during start-up`)));
    child.on('message', (reply: FloorReply) => {
      if (reply.type === 'ready') resolve(reply.taskQueue);
      else pending.get(reply.id)?.(reply);
    });
  });
  const ask = (request: Request) =>
    new Promise<Extract<FloorReply, { type: 'reply' }>>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, (reply) => {
        pending.delete(id);
        if (reply.error) reject(new Error(`floor worker: ${reply.error}`));
        else resolve(reply);
      });
      child.send({ ...request, id } as FloorRequest);
    });
  return {
    child,
    taskQueue,
    one: async (eager) => (await ask({ cmd: 'one', eager })).one!,
    loop: async (clients, durationS) => (await ask({ cmd: 'loop', clients, durationS })).loop!,
    async stop() {
      if (child.connected) {
        await Promise.race([ask({ cmd: 'stop' }), new Promise((r) => setTimeout(r, 30_000))]);
      }
      await stopChild(child, 10_000);
    },
  };
}
