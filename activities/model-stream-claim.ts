// One model stream per execution (issue 16): the attempt that asks the model holds the
// execution's claim, renewed with every heartbeat (activities/model-attempt.ts), until its answer
// is stored and `done` published. When Temporal gives up on an attempt whose stream is alive (its heartbeats could not
// reach the server for longer than the heartbeat timeout: a Temporal outage, a partition), that
// attempt streams on to the end and the retry waits for it instead of paying the model again. A
// dead attempt's claim lapses CLAIM_MS after its last renewal, well before Temporal's heartbeat
// timeout retries it, so a retry after a real death never waits.
import { setTimeout as sleep } from 'node:timers/promises';
import type { IdempotencyStore } from '../infra/idempotency-store';

/**
 * How long a claim outlives its holder's last renewal by default: 2.5 heartbeats at the default
 * heartbeat timeout's cadence (activities/model-attempt.ts sets it from the attempt's timeout).
 */
const CLAIM_MS = 12_500;
/** How often a waiting attempt looks whether the claim is free. */
const WAIT_POLL_MS = 250;

export class ModelStreamClaim {
  private readonly value: string;

  constructor(
    private readonly claims: IdempotencyStore,
    private readonly executionId: string,
    attempt: number,
    private readonly claimMs = CLAIM_MS,
  ) {
    this.value = String(attempt);
  }

  /**
   * Resolves when this attempt holds the claim: at once, or after the attempt that held it
   * released it or died (`waited`: the caller then reads the stored answer again). Redis out of
   * reach counts as held: the attempt then asks the model, as it would without claims. When
   * `signal` aborts while another attempt streams, `stopHolder()` says whether that stream must
   * stop too (the execution is cancelled): the claim is then taken from it, and it stops at its
   * next renewal.
   */
  async acquire(signal: AbortSignal, stopHolder: () => boolean): Promise<{ waited: boolean }> {
    let held: string | null = null;
    try {
      for (let waited = false; ; waited = true) {
        signal.throwIfAborted();
        try {
          held = await this.claims.claim(this.executionId, this.value, this.claimMs);
        } catch {
          return { waited };
        }
        if (held === null) return { waited };
        await sleep(WAIT_POLL_MS, undefined, { signal });
      }
    } catch (err) {
      if (held !== null && stopHolder()) {
        await this.claims.replace(this.executionId, held, this.value, this.claimMs).catch(() => false);
      }
      throw err;
    }
  }

  /**
   * Claims without waiting for the answer: for an activity's first attempt, which no earlier
   * attempt can be streaming for, so a retry (at least a heartbeat timeout later) finds it held.
   */
  hold(): void {
    this.claims.claim(this.executionId, this.value, this.claimMs).catch(() => null);
  }

  /** Renews the claim: false when another attempt holds it now (this stream must stop). */
  async renew(): Promise<boolean> {
    try {
      if (await this.claims.replace(this.executionId, this.value, this.value, this.claimMs)) return true;
      // Lapsed (a late renewal, Redis restarted without it): this attempt's again unless taken.
      return (await this.claims.claim(this.executionId, this.value, this.claimMs)) === null;
    } catch {
      return true; // Redis out of reach: no other attempt can take the claim through it either
    }
  }

  async release(): Promise<void> {
    await this.claims.release(this.executionId, this.value).catch(() => undefined);
  }
}
