// One attempt of the model activity while it runs: its heartbeats, its claim on the execution's
// model stream (activities/model-stream-claim.ts), and what stops it. Heartbeats go out four times
// per heartbeat timeout (every 5 s with the default 20 s), which is what the timeout needs to
// notice a dead worker; each one is a billable action on Temporal Cloud, so no more often. The
// claim is renewed with each heartbeat and lapses 2.5 heartbeats after the last, well before a
// dead attempt's retry comes (one heartbeat timeout later).
//
// What stops the stream: a stop notice for its execution (its workflow was cancelled: at once,
// through infra/stop-notices.ts), Temporal's cancellation (delivered with a heartbeat response),
// or losing the claim. Temporal giving up on this attempt because its heartbeats did not reach the
// server (an outage, a partition) is no reason to drop a live stream: it goes on to the end while
// the retry waits for it. Whatever else ends the attempt (the execution cancelled or closed, the
// worker shutting down, its start-to-close timeout) stops it.
import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { IdempotencyStore } from '../infra/idempotency-store';
import { FailureType } from '../workflows/contracts';
import type { ModelProgress } from './model-resume';
import { ModelStreamClaim } from './model-stream-claim';
import type { RunningStreams } from './running-streams';

/** Heartbeats per heartbeat timeout, and how many heartbeats a claim outlives its last renewal. */
const BEATS_PER_TIMEOUT = 4;
const CLAIM_BEATS = 2.5;
/** Without a heartbeat timeout (never set by the workflows), the default one's cadence. */
const DEFAULT_BEAT_MS = 5000;
/** How long an attempt Temporal gave up on asks whether it will be retried. */
const RETRY_LOOKUP_MS = 5000;

/** The heartbeat cadence for a heartbeat timeout. */
export const heartbeatEveryMs = (heartbeatTimeoutMs: number | undefined): number =>
  heartbeatTimeoutMs ? Math.max(1, Math.floor(heartbeatTimeoutMs / BEATS_PER_TIMEOUT)) : DEFAULT_BEAT_MS;

type StopCause = 'notice' | 'temporal' | 'claim';

export class ModelAttempt {
  /** Aborted when the stream must stop; `cause` says why. */
  readonly stop = new AbortController();
  cause: StopCause | undefined;
  private readonly claim: ModelStreamClaim;
  private readonly beatMs: number;
  private readonly startedAt = Date.now();
  private holding = false;
  /** What each heartbeat carries (resumable mode: ids and numbers only). */
  private details: ModelProgress | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unregister: (() => void) | undefined;

  constructor(
    private readonly ctx: Context,
    private readonly executionId: string,
    private readonly attempt: number,
    claims: IdempotencyStore,
    private readonly running: RunningStreams,
  ) {
    this.beatMs = heartbeatEveryMs(ctx.info.heartbeatTimeoutMs);
    this.claim = new ModelStreamClaim(claims, executionId, attempt, Math.round(this.beatMs * CLAIM_BEATS));
  }

  /** Starts heartbeating and listening for what stops the attempt. */
  begin(): void {
    this.unregister = this.running.add(this.executionId, () => this.halt('notice'));
    this.ctx.cancellationSignal.addEventListener('abort', this.onCancel);
    if (this.ctx.cancellationSignal.aborted) this.onCancel();
    this.timer = setInterval(this.beat, this.beatMs);
    this.beat();
  }

  /**
   * Takes the execution's claim. A first attempt takes it without a Redis round trip before the
   * model is asked (no earlier attempt can be streaming); a retry waits while another streams
   * (`waited`: the caller reads the stored answer again).
   */
  async takeClaim(first: boolean): Promise<{ waited: boolean }> {
    let waited = false;
    if (first) this.claim.hold();
    else
      ({ waited } = await this.claim.acquire(
        this.ctx.cancellationSignal,
        () => this.ctx.cancellationDetails?.cancelRequested === true,
      ));
    this.holding = true;
    return { waited };
  }

  /**
   * After a stop notice: waits for Temporal's own cancellation of this attempt (it comes with the
   * next heartbeat's response), so that the attempt completes as cancelled. Completing before it
   * would race the workflow's cancellation of the activity, which the workflow may still be
   * committing: a failure reported meanwhile would replace it in the workflow's history. Past one
   * heartbeat timeout without it, the attempt fails without a retry (the execution is cancelled).
   */
  async cancelledByTemporal(): Promise<void> {
    const signal = this.ctx.cancellationSignal;
    if (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.beatMs * BEATS_PER_TIMEOUT);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
    if (!signal.aborted)
      throw ApplicationFailure.create({
        type: FailureType.Cancelled,
        message: 'Execution cancelled',
        nonRetryable: true,
      });
  }

  /**
   * The background response this attempt streams and how far its text is relayed, for the next
   * attempt (activities/model-resume.ts): sent with the next heartbeat, at once for a new response.
   */
  progress(details: ModelProgress): void {
    const fresh = details.responseId !== this.details?.responseId;
    this.details = details;
    if (fresh && this.timer && !this.ctx.cancellationSignal.aborted) this.ctx.heartbeat(details);
  }

  end(): void {
    clearInterval(this.timer);
    this.unregister?.();
    this.ctx.cancellationSignal.removeEventListener('abort', this.onCancel);
    // Not awaited: the activity completes without the round trip; a waiting retry sees it soon.
    if (this.holding) void this.claim.release();
  }

  private halt(cause: StopCause): void {
    if (this.stop.signal.aborted) return;
    this.cause = cause;
    this.stop.abort();
  }

  private readonly beat = (): void => {
    if (!this.ctx.cancellationSignal.aborted) this.ctx.heartbeat(this.details);
    if (this.holding) void this.claim.renew().then((held) => held || this.halt('claim'));
  };

  private readonly onCancel = (): void => {
    const details = this.ctx.cancellationDetails;
    const overran = Date.now() - this.startedAt >= this.ctx.info.startToCloseTimeoutMs - this.beatMs;
    if (!(details?.notFound || details?.timedOut) || overran) this.halt('temporal');
    else void this.retryScheduled().then((retried) => retried || this.halt('temporal'));
  };

  /**
   * Whether Temporal has scheduled the next attempt of this activity: the attempt was "not found"
   * because it timed out (its heartbeats did not arrive), not because the execution was cancelled
   * or closed, which the server reports the same way once the workflow has ended. Asked on a fresh
   * signal: the activity's own is aborted by then. Unknown counts as no.
   */
  private async retryScheduled(): Promise<boolean> {
    try {
      const { client, info } = this.ctx;
      if (!info.workflowExecution) return false;
      const { workflowId, runId } = info.workflowExecution;
      const description = await client.withAbortSignal(AbortSignal.timeout(RETRY_LOOKUP_MS), () =>
        client.workflow.getHandle(workflowId, runId).describe(),
      );
      return (
        description.status.name === 'RUNNING' &&
        (description.raw.pendingActivities ?? []).some(
          (a) => a.activityId === info.activityId && (a.attempt ?? 0) > info.attempt,
        )
      );
    } catch {
      return false;
    }
  }
}
