// §16: when OpenTelemetry turns on, and what the Temporal SDK's log lines look like through pino.
import { ApplicationFailure } from '@temporalio/common';
import { Writable } from 'node:stream';
import { createLogger, temporalLogger } from '../../infra/logger';
import { telemetryEnabled } from '../../infra/telemetry';

describe('telemetryEnabled (§16: off when OTEL_* is unset)', () => {
  it.each([
    [{}, false],
    [{ OTEL_SERVICE_NAME: 'agentry' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_TRACES_EXPORTER: 'otlp,console' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
  ])('%j → %s', (env, expected) => {
    expect(telemetryEnabled(env)).toBe(expected);
  });
});

describe('temporalLogger (§16: SDK lines carry workflow and execution ids)', () => {
  function capture() {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    return { lines, logger: temporalLogger(createLogger('debug', sink)) };
  }

  it('an activity failure names the execution, the failure type and the message, without failure details', () => {
    const { lines, logger } = capture();
    const executionId = '0190a1b2-0000-7000-8000-0000000000aa';
    const error = ApplicationFailure.create({
      type: 'Llm.ServerError',
      message: 'Model server answered 500: boom',
      details: [{ upstreamStatus: 500, message: 'hidden-detail-text' }],
    });
    logger.warn('Activity failed', {
      sdkComponent: 'worker',
      workflowId: `execution-${executionId}`,
      activityType: 'callModel',
      attempt: 1,
      error,
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      msg: 'Activity failed',
      component: 'temporal',
      workflowId: `execution-${executionId}`,
      executionId,
      activityType: 'callModel',
      failureType: 'Llm.ServerError',
      error: { type: 'ApplicationFailure', message: 'Model server answered 500: boom' },
    });
    expect(JSON.stringify(lines[0])).not.toContain('hidden-detail-text');
  });

  it('maps the SDK levels and leaves non-execution workflows without an executionId', () => {
    const { lines, logger } = capture();
    logger.debug('Activity started', { workflowId: 'document-ingestion-1' });
    logger.info('Worker state changed', { state: 'RUNNING' });
    logger.error('boom');
    logger.trace('fine detail');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [20, 'Activity started'],
      [30, 'Worker state changed'],
      [50, 'boom'],
    ]);
    expect(lines[0]).not.toHaveProperty('executionId');
  });
});
