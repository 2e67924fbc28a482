// LLM-3: model-server errors become typed ApplicationFailures (Temporal owns retries), and
// EX-7: one reading of a failed execution gives its status and detail.
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  RetryState,
  TerminatedFailure,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { classifyModelError } from '../../activities/failures';
import { FailureType, type UpstreamFailureDetails } from '../../workflows/contracts';
import { describeFailure } from '../../workflows/describe-failure';

/** An SDK error as the openai client makes it from an error response with an OpenAI error body. */
function upstream(status: number, message: string, headers: Record<string, string> = {}): APIError {
  return APIError.generate(
    status,
    { error: { message, type: 'x', code: null } },
    undefined,
    new Headers(headers),
  );
}

const detailsOf = (f: ApplicationFailure): UpstreamFailureDetails => f.details?.[0] as UpstreamFailureDetails;

describe('classifyModelError (LLM-3)', () => {
  afterEach(() => jest.useRealTimers());

  it('LLM-3: 429 → Llm.RateLimited, retryable, with the upstream status and message', () => {
    const f = classifyModelError(upstream(429, 'Rate limit reached for requests'));
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f.type).toBe(FailureType.LlmRateLimited);
    expect(f.type).toBe('Llm.RateLimited');
    expect(f.nonRetryable).toBe(false);
    expect(detailsOf(f)).toEqual({ upstreamStatus: 429, message: 'Rate limit reached for requests' });
    expect(f.message).toContain('429');
    expect(f.message).toContain('Rate limit reached for requests');
  });

  it('LLM-3: 429 honours retry-after in seconds', () => {
    expect(classifyModelError(upstream(429, 'slow down', { 'retry-after': '7' })).nextRetryDelay).toBe(7000);
    expect(classifyModelError(upstream(429, 'slow down', { 'retry-after': '0.5' })).nextRetryDelay).toBe(500);
  });

  it('LLM-3: 429 honours retry-after as an HTTP date', () => {
    jest.useFakeTimers({ now: new Date('2025-01-01T00:00:00Z') });
    const f = classifyModelError(
      upstream(429, 'slow down', { 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }),
    );
    expect(f.nextRetryDelay).toBe(30_000);
  });

  it('LLM-3: retry-after-ms wins over retry-after', () => {
    const f = classifyModelError(upstream(429, 'x', { 'retry-after-ms': '250', 'retry-after': '9' }));
    expect(f.nextRetryDelay).toBe(250);
  });

  it('LLM-3: a retry-after-ms that is not positive yields to retry-after (as the openai SDK reads it)', () => {
    const f = classifyModelError(upstream(429, 'x', { 'retry-after-ms': '0', 'retry-after': '3' }));
    expect(f.nextRetryDelay).toBe(3000);
  });

  it('LLM-3: retry-after is capped', () => {
    expect(classifyModelError(upstream(429, 'x', { 'retry-after': '3600' })).nextRetryDelay).toBe(60_000);
    jest.useFakeTimers({ now: new Date('2025-01-01T00:00:00Z') });
    expect(
      classifyModelError(upstream(429, 'x', { 'retry-after': 'Thu, 02 Jan 2025 00:00:00 GMT' }))
        .nextRetryDelay,
    ).toBe(60_000);
  });

  it("issue 33: a retry hint beyond the retry policy's maximum interval is capped to it (Temporal takes it as given)", () => {
    const hinted = upstream(429, 'x', { 'retry-after': '30' });
    expect(classifyModelError(hinted, 4000).nextRetryDelay).toBe(4000);
    expect(classifyModelError(upstream(503, 'x', { 'retry-after': '2' }), 4000).nextRetryDelay).toBe(2000);
    expect(classifyModelError(upstream(503, 'x'), 4000).nextRetryDelay).toBeUndefined();
  });

  it('LLM-3: without a usable retry-after the retry policy applies (no nextRetryDelay)', () => {
    jest.useFakeTimers({ now: new Date('2025-01-01T00:00:00Z') });
    for (const headers of <Record<string, string>[]>[
      {},
      { 'retry-after': '0' },
      { 'retry-after': '-3' },
      { 'retry-after': 'soon' },
      { 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }, // in the past
    ]) {
      expect(classifyModelError(upstream(429, 'x', headers)).nextRetryDelay).toBeUndefined();
    }
  });

  it.each([500, 502, 503, 504, 408, 409])('LLM-3: %p → Llm.ServerError, retryable', (status) => {
    const f = classifyModelError(upstream(status, 'upstream trouble'));
    expect(f.type).toBe('Llm.ServerError');
    expect(f.nonRetryable).toBe(false);
    expect(detailsOf(f)).toEqual({ upstreamStatus: status, message: 'upstream trouble' });
  });

  it('LLM-3: a 503 with retry-after honours it', () => {
    expect(classifyModelError(upstream(503, 'busy', { 'retry-after': '2' })).nextRetryDelay).toBe(2000);
  });

  it.each([400, 401, 403, 404, 422])('LLM-3: %p → Llm.Rejected, not retryable', (status) => {
    const f = classifyModelError(upstream(status, 'no such model'));
    expect(f.type).toBe('Llm.Rejected');
    expect(f.nonRetryable).toBe(true);
    expect(detailsOf(f)).toEqual({ upstreamStatus: status, message: 'no such model' });
  });

  it('LLM-3: an error built as in the brief (message only) carries the message once, without the status', () => {
    const f = classifyModelError(
      APIError.generate(429, { message: 'x' }, 'x', new Headers({ 'retry-after': '1' })),
    );
    expect(f.type).toBe('Llm.RateLimited');
    expect(f.nextRetryDelay).toBe(1000);
    expect(detailsOf(f).upstreamStatus).toBe(429);
    expect(detailsOf(f).message).toBe('x');
  });

  it('LLM-3: a non-JSON error body is the message, not repeated after the status', () => {
    // The SDK passes a text body as `message`; its own message is then "<status> <text>".
    const f = classifyModelError(APIError.generate(502, undefined, 'Bad gateway from proxy', new Headers()));
    expect(detailsOf(f)).toEqual({ upstreamStatus: 502, message: 'Bad gateway from proxy' });
    expect(describeFailure(f).detail).toBe('Model server failed: 502 Bad gateway from proxy');
  });

  it('LLM-3: the upstream message is trimmed to 500 characters', () => {
    expect(detailsOf(classifyModelError(upstream(400, 'y'.repeat(2000)))).message).toHaveLength(500);
  });

  it('LLM-3: a connection error → Llm.Unreachable, retryable', () => {
    for (const err of [new APIConnectionError({ message: 'x' }), new APIConnectionTimeoutError()]) {
      const f = classifyModelError(err);
      expect(f.type).toBe('Llm.Unreachable');
      expect(f.nonRetryable).toBe(false);
      expect(detailsOf(f).upstreamStatus).toBeUndefined();
      expect(detailsOf(f).message).toMatch(/unreachable/i);
    }
  });

  it('LLM-3: any other error → Llm.Unreachable, retryable, with its message', () => {
    const f = classifyModelError(new TypeError('fetch failed'));
    expect(f.type).toBe('Llm.Unreachable');
    expect(f.nonRetryable).toBe(false);
    expect(f.message).toContain('fetch failed');
  });

  it('LLM-3: an ApplicationFailure (e.g. Llm.Stalled) passes through unchanged', () => {
    const stalled = ApplicationFailure.create({ type: FailureType.LlmStalled, message: 'no progress' });
    expect(classifyModelError(stalled)).toBe(stalled);
  });

  it('LLM-3: the failure never carries the API key sent', () => {
    const err = upstream(401, 'Incorrect API key provided');
    const f = classifyModelError(err);
    expect(JSON.stringify({ message: f.message, details: f.details })).not.toContain('sk-');
  });
});

/** The chain Temporal gives a workflow when an activity fails after its last attempt. */
function activityFailure(cause: Error): ActivityFailure {
  return new ActivityFailure(
    'Activity task failed',
    'callModel',
    '1',
    RetryState.MAXIMUM_ATTEMPTS_REACHED,
    'worker@host',
    cause,
  );
}

describe('describeFailure (EX-7, LLM-3)', () => {
  it('LLM-3: a model failure after the last attempt is 502 naming the upstream status and message', () => {
    const d = describeFailure(activityFailure(classifyModelError(upstream(500, 'The server had an error'))));
    expect(d).toEqual({
      status: 502,
      type: 'Llm.ServerError',
      detail: 'Model server failed: 500 The server had an error',
      cancelled: false,
    });
  });

  it('LLM-3: a 429 that outlived every attempt is 502 too, naming 429', () => {
    const d = describeFailure(activityFailure(classifyModelError(upstream(429, 'Rate limit reached'))));
    expect(d.status).toBe(502);
    expect(d.detail).toContain('429');
    expect(d.detail).toContain('Rate limit reached');
  });

  it('LLM-3: the failure may sit deeper in the chain (workflow error → activity → application)', () => {
    const wrapped = new Error('Workflow execution failed', {
      cause: activityFailure(classifyModelError(upstream(400, 'Unsupported parameter'))),
    });
    const d = describeFailure(wrapped);
    expect(d.status).toBe(502);
    expect(d.type).toBe('Llm.Rejected');
    expect(d.detail).toBe('Model server failed: 400 Unsupported parameter');
  });

  it('LLM-3: an unreachable model server is 502 with its message', () => {
    const d = describeFailure(activityFailure(classifyModelError(new APIConnectionError({ message: 'x' }))));
    expect(d.status).toBe(502);
    expect(d.detail).toMatch(/^Model server failed: .*unreachable/i);
  });

  it('DX-3: a CancelledFailure anywhere in the chain → 499 cancelled', () => {
    for (const err of [
      new CancelledFailure('Activity cancelled'),
      activityFailure(new CancelledFailure('Activity cancelled')),
      new Error('wrapped', { cause: activityFailure(new CancelledFailure('x')) }),
    ]) {
      expect(describeFailure(err)).toEqual({
        status: 499,
        type: 'Execution.Cancelled',
        detail: 'Execution cancelled',
        cancelled: true,
      });
    }
  });

  it('EX-7: cancellation wins over a model failure in the same chain', () => {
    const err = new CancelledFailure('cancelled', [], classifyModelError(upstream(500, 'x')));
    expect(describeFailure(err).status).toBe(499);
  });

  it('EX-7: anything unknown is 503, a dependency problem', () => {
    for (const err of [
      new Error('boom'),
      'a string',
      undefined,
      new TerminatedFailure('terminated'),
      activityFailure(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE)),
    ]) {
      const d = describeFailure(err);
      expect(d.status).toBe(503);
      expect(d.cancelled).toBe(false);
      expect(d.detail).toBe('Execution failed: a dependency is unavailable, try again');
    }
  });

  it('EX-7: an Infra.Unavailable failure is 503', () => {
    const d = describeFailure(
      activityFailure(
        ApplicationFailure.create({ type: FailureType.InfraUnavailable, message: 'redis down' }),
      ),
    );
    expect(d).toMatchObject({ status: 503, type: 'Infra.Unavailable' });
  });

  it('EX-7: Execution.NotFound is 404 with its message', () => {
    const d = describeFailure(
      activityFailure(
        ApplicationFailure.create({ type: FailureType.NotFound, message: 'LLM not found: abc' }),
      ),
    );
    expect(d).toEqual({
      status: 404,
      type: 'Execution.NotFound',
      detail: 'LLM not found: abc',
      cancelled: false,
    });
  });

  it('EX-7: a cyclic cause chain does not hang', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(describeFailure(a).status).toBe(503);
  });
});
