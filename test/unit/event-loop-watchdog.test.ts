// Issue 33 item 3: the event-loop watchdog sees a blocked loop: a warn line without content, a
// sample in the delay histogram, and the recent delay the worker's /livez asks for.
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { watchEventLoop, type EventLoopWatchdog } from '../../infra/event-loop-watchdog';
import { createLogger } from '../../infra/logger';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Keeps the event loop busy for `ms`: nothing else in this process runs meanwhile. */
function blockLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

function logged() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      );
      done();
    },
  });
  return { lines, logger: createLogger('info', sink) };
}

function sampleOf(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ').pop()) : NaN;
}

describe('event-loop watchdog (issue 33 item 3)', () => {
  let watchdog: EventLoopWatchdog | undefined;
  afterEach(() => watchdog?.stop());

  it('a loop blocked for more than a second is one warn line and a delay sample above 1 s', async () => {
    const registry = new Registry();
    const { lines, logger } = logged();
    watchdog = watchEventLoop({ registry, logger });
    await sleep(250);
    blockLoop(1300);
    await sleep(250);
    const warnings = lines.filter((l) => l['msg'] === 'event loop blocked');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!['level']).toBe(40);
    expect(warnings[0]!['blockedMs']).toBeGreaterThanOrEqual(1200);
    // Nothing but the delay: no stack, no request, no content.
    expect(Object.keys(warnings[0]!).sort()).toEqual(['blockedMs', 'level', 'msg', 'service', 'time']);
    const text = await registry.metrics();
    const count = sampleOf(text, 'agentry_event_loop_delay_seconds_count');
    expect(count).toBeGreaterThanOrEqual(3);
    expect(sampleOf(text, 'agentry_event_loop_delay_seconds_bucket{le="1"}')).toBe(count - 1);
    expect(sampleOf(text, 'agentry_event_loop_delay_seconds_sum')).toBeGreaterThanOrEqual(1.2);
    expect(watchdog.recentDelayMs()).toBeGreaterThanOrEqual(1200);
  });

  it('a loop that only waits logs nothing and reports small delays', async () => {
    const registry = new Registry();
    const { lines, logger } = logged();
    watchdog = watchEventLoop({ registry, logger });
    await sleep(600);
    expect(lines.filter((l) => l['msg'] === 'event loop blocked')).toEqual([]);
    expect(watchdog.recentDelayMs()).toBeLessThan(500);
    const text = await registry.metrics();
    expect(sampleOf(text, 'agentry_event_loop_delay_seconds_bucket{le="0.5"}')).toBe(
      sampleOf(text, 'agentry_event_loop_delay_seconds_count'),
    );
  });
});
