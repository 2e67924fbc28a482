// LLM-4: a direct query as a workflow: the model activity, then the record. On failure or
// cancellation the workflow publishes the in-band `error` event and records the outcome in a
// non-cancellable scope, then fails, so the API and re-attaching readers see the same end.
import { CancellationScope, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { type ExecutionProfiles, type ExecutionResult, type LlmQueryInput } from './contracts';
import { describeFailure } from './describe-failure';
import { retryPolicy } from './retry-policy';

export function modelActivities(profiles: ExecutionProfiles) {
  return proxyActivities<Pick<Activities, 'callModel'>>({
    startToCloseTimeout: profiles.llm.startToCloseMs,
    heartbeatTimeout: profiles.llm.heartbeatTimeoutMs,
    retry: retryPolicy(profiles.llm),
  });
}

/**
 * Short database and relay steps run as local activities: recorded in the workflow task that
 * runs them, without a schedule/dispatch/complete round trip through the server each (DESIGN §6).
 */
export function bookkeepingActivities(profiles: ExecutionProfiles) {
  return proxyLocalActivities<Pick<Activities, 'publishError' | 'finishExecution'>>({
    startToCloseTimeout: profiles.bookkeeping.startToCloseMs,
    retry: retryPolicy(profiles.bookkeeping),
  });
}

/** Runs `body`; on failure publishes the error event and records the outcome, then rethrows it. */
export async function withExecutionOutcome<R extends ExecutionResult>(
  executionId: string,
  profiles: ExecutionProfiles,
  body: () => Promise<R>,
): Promise<R> {
  const book = bookkeepingActivities(profiles);
  let result: R;
  try {
    result = await body();
  } catch (err) {
    const failure = describeFailure(err);
    // Both steps run, each on its own: a failed one must not hide the execution's real outcome.
    await CancellationScope.nonCancellable(() =>
      Promise.allSettled([
        book.publishError({ executionId, status: failure.status, detail: failure.detail }),
        book.finishExecution({
          executionId,
          status: failure.cancelled ? 'cancelled' : 'failed',
          error: { status: failure.status, type: failure.type },
        }),
      ]),
    );
    throw err;
  }
  // The answer is stored and `done` published: a late cancellation or a failed record must not
  // turn a delivered answer into a failed execution.
  await CancellationScope.nonCancellable(() =>
    book.finishExecution({ executionId, status: 'succeeded', usage: result.usage }).catch(() => undefined),
  );
  return result;
}

export async function llmQuery(input: LlmQueryInput): Promise<ExecutionResult> {
  const { callModel } = modelActivities(input.profiles);
  return withExecutionOutcome(input.executionId, input.profiles, async () => {
    const { answerPayloadId, usage } = await callModel({
      executionId: input.executionId,
      llmId: input.llmId,
      requestPayloadId: input.requestPayloadId,
      ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
      noProgressMs: input.profiles.llm.noProgressMs,
    });
    return { answerPayloadId, usage };
  });
}
