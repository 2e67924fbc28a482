// `/readyz` asked every 200 ms from a thread of its own while a test drives an in-process stack
// (issue 33): the probe must not share the event loop it watches, since a loop stuck in
// microtasks (an empty delta once hung the model activity's process that way) stops every timer
// on it, a probe's and jest's timeout included, and so could never report. A stuck loop cannot
// fail its test either: when /readyz has not answered for `fatalMs`, the probe writes why to
// stderr and kills the process, so the run fails instead of hanging.
import { Worker } from 'node:worker_threads';

export interface ReadinessReport {
  /** The slowest answer since the last report, in ms: a request still open counts its age so far. */
  worstMs: number;
  answers: number;
  /** Answers that were not 200, and requests that failed. */
  notReady: number;
}

// Plain JavaScript: the worker thread loads no TypeScript.
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const { url, intervalMs, fatalMs } = workerData;
let report = { worstMs: 0, answers: 0, notReady: 0 };
let askedAt;
// A request open across a report counts in each report for its time in that report's window.
let windowStart = Date.now();
setInterval(() => {
  if (askedAt === undefined || Date.now() - askedAt < fatalMs) return;
  writeSync(2, '\\nreadiness probe: ' + url + ' gave no answer for ' + fatalMs + ' ms: the event loop is stuck; killing the process\\n');
  process.kill(process.pid, 'SIGKILL');
}, 100);
async function ask() {
  askedAt = Date.now();
  let ready = false;
  try {
    const res = await fetch(url);
    await res.arrayBuffer();
    ready = res.status === 200;
  } catch {}
  report.answers += 1;
  if (!ready) report.notReady += 1;
  report.worstMs = Math.max(report.worstMs, Date.now() - Math.max(askedAt, windowStart));
  askedAt = undefined;
  setTimeout(ask, intervalMs);
}
parentPort.on('message', () => {
  const open = askedAt === undefined ? 0 : Date.now() - Math.max(askedAt, windowStart);
  parentPort.postMessage({ ...report, worstMs: Math.max(report.worstMs, open) });
  report = { worstMs: 0, answers: 0, notReady: 0 };
  windowStart = Date.now();
});
void ask();
`;

export class ReadinessProbe {
  private constructor(private readonly worker: Worker) {}

  static start(baseUrl: string, opts: { intervalMs?: number; fatalMs?: number } = {}): ReadinessProbe {
    const worker = new Worker(PROBE, {
      eval: true,
      workerData: {
        url: `${baseUrl}/readyz`,
        intervalMs: opts.intervalMs ?? 200,
        fatalMs: opts.fatalMs ?? 15_000,
      },
    });
    return new ReadinessProbe(worker);
  }

  /** What the probe saw since the last report. */
  report(): Promise<ReadinessReport> {
    return new Promise((resolve) => {
      this.worker.once('message', resolve);
      this.worker.postMessage('report');
    });
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
