// The worker's own Prometheus series (SPEC §16), recorded by an activity interceptor so that no
// activity carries metrics code: every activity's duration by type and outcome, failures by
// failure type, and for the model call and retrieval activities their duration and the model's
// token counts. Labels are activity names, outcomes, failure types and token directions: bounded
// sets, never ids or text.
import type { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Activities that call the model (their result carries `usage`). */
const MODEL_ACTIVITIES = new Set(['callModel']);
/** Activities that run a similarity search. */
const RETRIEVAL_ACTIVITIES = new Set(['retrieveFragments']);

export type Outcome = 'success' | 'failure' | 'cancelled';

interface WorkerMetrics {
  activityDuration: Histogram<'activity' | 'outcome'>;
  activityFailures: Counter<'activity' | 'type'>;
  modelCallDuration: Histogram<'outcome'>;
  modelTokens: Counter<'direction'>;
  retrievalDuration: Histogram<'outcome'>;
  modelResumes: Counter<'outcome'>;
}

export function createWorkerMetrics(registry: Registry): WorkerMetrics {
  const registers = [registry];
  return {
    activityDuration: new Histogram({
      name: 'agentry_activity_duration_seconds',
      help: 'Activity durations by type and outcome (success, failure, cancelled)',
      labelNames: ['activity', 'outcome'],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    }),
    activityFailures: new Counter({
      name: 'agentry_activity_failures_total',
      help: 'Failed activity attempts by type and failure type (e.g. Llm.RateLimited)',
      labelNames: ['activity', 'type'],
      registers,
    }),
    modelCallDuration: new Histogram({
      name: 'agentry_model_call_duration_seconds',
      help: 'Model call attempts (the LLM activity: request, streamed answer, stored result) by outcome',
      labelNames: ['outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600],
      registers,
    }),
    modelTokens: new Counter({
      name: 'agentry_model_tokens_total',
      help: 'Tokens reported by the model for completed calls, by direction (input, output)',
      labelNames: ['direction'],
      registers,
    }),
    retrievalDuration: new Histogram({
      name: 'agentry_retrieval_duration_seconds',
      help: 'Retrieval activity durations (query embedding and similarity search) by outcome',
      labelNames: ['outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    modelResumes: new Counter({
      name: 'agentry_model_resumes_total',
      help:
        'Resumable LLMs (issue 27): model streams a retry resumed (resumed), connections to the model ' +
        'resumed within an attempt (reconnected), and resumes that fell back to a new model call (restarted)',
      labelNames: ['outcome'],
      registers,
    }),
  };
}

const FAILURE_TYPE = /^[A-Za-z][A-Za-z0-9._]{0,63}$/;

/** A failure type fit for a label: ours are `Area.Name`; anything else is `other`. */
function failureType(err: unknown): string {
  if (err instanceof ApplicationFailure && err.type && FAILURE_TYPE.test(err.type)) return err.type;
  return 'other';
}

function outcomeOf(err: unknown, ctx: Context): Outcome {
  return err instanceof CancelledFailure || ctx.cancellationSignal.aborted ? 'cancelled' : 'failure';
}

function tokens(result: unknown): { input: number; output: number } | undefined {
  const usage = (result as { usage?: { input_tokens?: unknown; output_tokens?: unknown } } | null)?.usage;
  if (!usage) return undefined;
  const input = Number(usage.input_tokens);
  const output = Number(usage.output_tokens);
  if (!Number.isFinite(input) || !Number.isFinite(output) || input < 0 || output < 0) return undefined;
  return { input, output };
}

/** The interceptor factory for `Worker.create({ interceptors: { activity: [...] } })`. */
export function activityMetricsInterceptor(metrics: WorkerMetrics): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const activity = ctx.info.activityType;
        const started = process.hrtime.bigint();
        const observe = (outcome: Outcome): void => {
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          metrics.activityDuration.observe({ activity, outcome }, seconds);
          if (MODEL_ACTIVITIES.has(activity)) metrics.modelCallDuration.observe({ outcome }, seconds);
          if (RETRIEVAL_ACTIVITIES.has(activity)) metrics.retrievalDuration.observe({ outcome }, seconds);
        };
        try {
          const result = await next(input);
          observe('success');
          if (MODEL_ACTIVITIES.has(activity)) {
            const used = tokens(result);
            if (used) {
              metrics.modelTokens.inc({ direction: 'input' }, used.input);
              metrics.modelTokens.inc({ direction: 'output' }, used.output);
            }
          }
          return result;
        } catch (err) {
          const outcome = outcomeOf(err, ctx);
          observe(outcome);
          if (outcome === 'failure') metrics.activityFailures.inc({ activity, type: failureType(err) });
          throw err;
        }
      },
    },
  });
}
