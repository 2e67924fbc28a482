// How an execution workflow ends for the API and re-attaching readers: on failure or
// cancellation the in-band `error` event is published and the outcome recorded in a
// non-cancellable scope before the workflow fails; on success the record is finished.
import { CancellationScope, patched } from '@temporalio/workflow';
import { bookkeepingActivities } from './activity-proxies';
import type { ExecutionProfiles, ExecutionResult } from './contracts';
import { describeFailure } from './describe-failure';

/** Publishes the error event of `err` and records the execution as failed or cancelled. */
export async function recordFailure(
  executionId: string,
  profiles: ExecutionProfiles,
  err: unknown,
): Promise<void> {
  const book = bookkeepingActivities(profiles);
  const failure = describeFailure(err);
  const publish = () => book.publishError({ executionId, status: failure.status, detail: failure.detail });
  const finish = () =>
    book.finishExecution({
      executionId,
      status: failure.cancelled ? 'cancelled' : 'failed',
      error: { status: failure.status, type: failure.type },
    });
  // Both steps run, each on its own: a failed one must not hide the execution's real outcome.
  await CancellationScope.nonCancellable(async () => {
    if (patched('record-before-error-event')) {
      // The record first: a client that saw the `error` event reads the failed record (DX-1).
      await finish().catch(() => undefined);
      await publish().catch(() => undefined);
    } else await Promise.allSettled([publish(), finish()]);
  });
}

/** Runs `body`; on failure publishes the error event and records the outcome, then rethrows it. */
export async function withExecutionOutcome<R extends ExecutionResult>(
  executionId: string,
  profiles: ExecutionProfiles,
  body: () => Promise<R>,
): Promise<R> {
  let result: R;
  try {
    result = await body();
  } catch (err) {
    await recordFailure(executionId, profiles, err);
    throw err;
  }
  // The answer is stored and `done` published: a late cancellation or a failed record must not
  // turn a delivered answer into a failed execution.
  const book = bookkeepingActivities(profiles);
  await CancellationScope.nonCancellable(() =>
    book.finishExecution({ executionId, status: 'succeeded', usage: result.usage }).catch(() => undefined),
  );
  return result;
}
