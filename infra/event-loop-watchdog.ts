// A watchdog on the process's own liveness (issue 33 item 3): a timer that should fire every
// 100 ms measures how late it fires. Every delay goes into `agentry_event_loop_delay_seconds`, a
// block of a second or more is a warn line (how long, nothing else), and the worker's /livez asks
// for the longest recent delay (infra/worker-probes.ts), so that an operator, and Kubernetes, see
// a wedged loop before clients do. A timer's drift, not perf_hooks.monitorEventLoopDelay: the
// latter only summarises delays after the fact, and a loop blocked right now must count too.
import { Histogram, type Registry } from 'prom-client';
import type { Logger } from './logger';

const TICK_MS = 100;
/** A delay of this much or more is logged (issue 33: "blocked for more than a second"). */
export const BLOCKED_MS = 1000;
/** How far back `recentDelayMs` looks: the period of a liveness probe. */
const WINDOW_MS = 10_000;

export interface EventLoopWatchdog {
  /** The longest loop delay (ms) within the last 10 s, one going on now included. */
  recentDelayMs(): number;
  stop(): void;
}

export function watchEventLoop(options: {
  registry: Registry;
  logger: Logger;
  blockedMs?: number;
}): EventLoopWatchdog {
  const { logger, blockedMs = BLOCKED_MS } = options;
  const delays = new Histogram({
    name: 'agentry_event_loop_delay_seconds',
    help: `How late a ${TICK_MS} ms timer fired: the event loop's delay (a block of ${BLOCKED_MS / 1000} s or more is also logged)`,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [options.registry],
  });
  let last = performance.now();
  // Delays that ended within the window, as [when it ended, how long]; only the large ones matter.
  let recent: Array<[at: number, delayMs: number]> = [];
  const timer = setInterval(() => {
    const now = performance.now();
    const delay = Math.max(0, now - last - TICK_MS);
    last = now;
    delays.observe(delay / 1000);
    if (delay >= blockedMs) logger.warn({ blockedMs: Math.round(delay) }, 'event loop blocked');
    recent = recent.filter(([at, ms]) => now - at < WINDOW_MS && ms > delay);
    recent.push([now, delay]);
  }, TICK_MS);
  timer.unref();
  return {
    recentDelayMs() {
      const now = performance.now();
      const ongoing = Math.max(0, now - last - TICK_MS);
      const past = recent.filter(([at]) => now - at < WINDOW_MS).map(([, ms]) => ms);
      return Math.max(ongoing, ...past);
    },
    stop: () => clearInterval(timer),
  };
}
