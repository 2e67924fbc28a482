// Closed-loop clients: each runs one operation after another until a deadline, recording its
// time to first token and total time, or its error.
import { nowMs } from './env';

export interface Timed {
  ttftMs: number;
  totalMs: number;
}

export interface ClosedLoop {
  ttft: number[];
  total: number[];
  errors: string[];
  completed: number;
}

/**
 * `clients` clients, each running `once(client, i)` back to back until `deadline` (wall ms) or
 * `stop()`; records time to first token and total time of each success, and each error message.
 */
export async function closedLoop(
  clients: number,
  deadline: number,
  stop: () => boolean,
  once: (client: number, i: number) => Promise<Timed>,
): Promise<ClosedLoop> {
  const out: ClosedLoop = { ttft: [], total: [], errors: [], completed: 0 };
  const client = async (c: number): Promise<void> => {
    for (let i = 0; nowMs() < deadline && !stop(); i++) {
      try {
        const ex = await once(c, i);
        out.ttft.push(ex.ttftMs);
        out.total.push(ex.totalMs);
        out.completed += 1;
      } catch (err) {
        out.errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  return out;
}
