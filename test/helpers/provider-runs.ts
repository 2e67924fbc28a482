// One agent execution against a scripted model, and what issue 33's provider-behaviour suite checks
// of every one: the exact answer (or one in-band error with its status), the record and its stored
// answer saying the same, and /readyz answering within 1 s while it ran and after it.
import type { FakeBehaviour, FakeModelServer } from '../fakes/fake-model-server';
import { executeAgent, expectCleanAnswer, type SeededAgent } from './agent-streams';
import type { ReadinessProbe, ReadinessReport } from './readiness-probe';
import type { Stack } from './stack';
import { until } from './wait';

export interface ProviderRun {
  events: any[];
  executionId: string;
  /** GET /executions/{id} once the execution finished. */
  record: any;
  /** /readyz from the execution's start until its record was read. */
  during: ReadinessReport;
  /** One /readyz after it, in ms. */
  afterMs: number;
  /** From the request until the stream ended, in ms. */
  elapsedMs: number;
}

export class ProviderRuns {
  constructor(
    private readonly stack: Stack,
    private readonly fake: FakeModelServer,
    private readonly probe: ReadinessProbe,
  ) {}

  /** Executes `agent` with its model scripted; `sample` is called every 20 ms while it streams. */
  async run(
    agent: SeededAgent,
    model: string,
    behaviour: FakeBehaviour,
    sample?: () => void,
  ): Promise<ProviderRun> {
    this.fake.script(model, behaviour);
    await this.probe.report();
    const started = Date.now();
    const stream = await executeAgent(this.stack.api, agent);
    expect(stream.status).toBe(200);
    const sampling = sample ? setInterval(sample, 20) : undefined;
    await stream.ended.finally(() => clearInterval(sampling));
    const elapsedMs = Date.now() - started;
    const record = await until(
      async () => {
        const res = await this.stack.api.get(`/executions/${stream.executionId}`);
        return res.body.status === 'running' ? undefined : res.body;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'the finished record' },
    );
    const during = await this.probe.report();
    const asked = Date.now();
    expect((await fetch(`${this.stack.url}/readyz`)).status).toBe(200);
    const afterMs = Date.now() - asked;
    return { events: stream.events, executionId: stream.executionId, record, during, afterMs, elapsedMs };
  }
}

export function expectResponsive(r: ProviderRun): void {
  expect(r.during.answers).toBeGreaterThan(0);
  expect(r.during).toMatchObject({ notReady: 0 });
  expect(r.during.worstMs).toBeLessThan(1000);
  expect(r.afterMs).toBeLessThan(1000);
}

/** The exact answer reached the client, its record stored it, and /readyz kept answering. */
export function expectAnswer(r: ProviderRun, answer: string, attempt?: number): void {
  expectCleanAnswer(r.events, answer, attempt);
  const done = r.events[r.events.length - 1];
  expect(r.record.status).toBe('succeeded');
  // Not toMatchObject: a mismatch of a 1 MB answer would print it whole.
  expect(r.record.answer === answer).toBe(true);
  expect(r.record.usage).toEqual(done.usage);
  expectResponsive(r);
}

/** One in-band error ended the stream, the record failed with its status, nothing was stored. */
export function expectError(r: ProviderRun, status: number, detail: RegExp): void {
  const last = r.events[r.events.length - 1];
  expect(last).toMatchObject({ type: 'error', status });
  expect(last.detail).toMatch(detail);
  expect(r.events.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
  expect(r.record).toMatchObject({ status: 'failed', error: { status } });
  expect(r.record.answer).toBeUndefined();
  expectResponsive(r);
}
