// The streams benchmark's model: the paced fake model server in a child process
// (bench/lib/paced-model-process.ts), so its work is not the benchmark's and its deltas go out on
// time however busy the clients are. Its pid counts its CPU apart; `take()` answers when each
// answer's deltas were written (keyed by the answer's second word) and how many requests came.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ModelIpc } from './paced-model-process';
import { stopChild } from './processes';

export interface PacedModel {
  url: string;
  pid: number | undefined;
  /** Paces `model`'s deltas `deltaDelayMs` apart. */
  script(model: string, deltaDelayMs: number): Promise<void>;
  /** Emission times (wall ms) of each answer's deltas since the last take, and the requests. */
  take(): Promise<{ emissions: Record<string, number[]>; requests: number }>;
  close(): Promise<void>;
}

type Reply = { id: number; emissions?: Record<string, number[]>; requests?: number };

export async function startPacedModel(): Promise<PacedModel> {
  const child: ChildProcess = fork(path.join(__dirname, 'paced-model-process.js'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the paced model exited with ${code} at start`)));
    child.once('message', (m: { ready?: string }) =>
      m.ready ? resolve(m.ready) : reject(new Error('bad start')),
    );
  });
  const waiting = new Map<number, (reply: Reply) => void>();
  child.on('message', (m: Reply) => waiting.get(m.id)?.(m));
  let next = 0;
  const ask = (message: Omit<ModelIpc, 'id'>): Promise<Reply> =>
    new Promise((resolve) => {
      const id = ++next;
      waiting.set(id, (reply) => {
        waiting.delete(id);
        resolve(reply);
      });
      child.send({ ...message, id });
    });
  return {
    url,
    pid: child.pid,
    script: async (model, deltaDelayMs) => void (await ask({ script: { model, deltaDelayMs } })),
    take: async () => {
      const reply = await ask({ take: true });
      return { emissions: reply.emissions ?? {}, requests: reply.requests ?? 0 };
    },
    close: async () => {
      child.disconnect();
      await stopChild(child, 5000);
    },
  };
}
