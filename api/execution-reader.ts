// Reads one execution's relay log as client events (SPEC §9.5/9.6), from the start. The relay
// carries every outcome the workflow publishes (`done`, and `error` on failure or cancellation);
// the workflow's state is the backstop for one that closed without a terminal event (terminated
// by an operator, Redis lost the stream): a reader that hears nothing for a while asks Temporal,
// less and less often, instead of holding a long poll on every stream while it runs.
import { WorkflowFailedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { ExecutionStore } from '../db/execution-store';
import { EventSequencer, type ClientEvent } from '../domain/stream-events';
import { compareEntryIds, entryTimeMs, RELAY_START, type Relay, type RelayFeed } from '../infra/relay';
import type { StoredAnswer } from '../services/answers';
import type { ExecutionResult } from '../workflows/contracts';
import { describeFailure } from '../workflows/describe-failure';

type Outcome = { ok: true; result: ExecutionResult } | { ok: false; error: unknown };

interface ReadBatch {
  events: ClientEvent[];
  /** Relay append → read delay of each entry (ms), for the relay-lag metric. */
  lagsMs: number[];
}

/** Silence before the first look at the workflow, and the longest between two looks. */
const FIRST_LOOK_MS = 2000;
const LONGEST_LOOK_MS = 15_000;

export class ExecutionReader {
  readonly sequencer = new EventSequencer();
  private readonly feed: RelayFeed;
  /** Entries appended before this reader started are a replay, not relay lag. */
  private readonly startedMs = Date.now();
  private outcome: Outcome | undefined;
  private quietSince = Date.now();
  private lookAfterMs = FIRST_LOOK_MS;

  /** The last relay entry read. */
  private cursor = RELAY_START;

  constructor(
    private readonly relay: Relay,
    private readonly executions: ExecutionStore,
    readonly executionId: string,
    private readonly handle: WorkflowHandle,
  ) {
    this.feed = relay.follow(executionId, RELAY_START);
  }

  get finished(): boolean {
    return this.sequencer.terminated;
  }

  /** Stops following the relay (the response ended, or its client went away). */
  close(): void {
    this.feed.close();
  }

  /** The next events (possibly none while waiting); never called after `finished`. */
  async next(blockMs: number): Promise<ReadBatch> {
    const closed = this.outcome !== undefined;
    // Once the workflow has closed, what the log holds is read directly: nothing may be missed
    // before an outcome is made up.
    const entries = closed
      ? (await this.relay.read(this.executionId, this.cursor)).filter(
          (e) => compareEntryIds(e.id, this.cursor) > 0,
        )
      : await this.feed.next(blockMs);
    if (entries.length > 0) {
      this.cursor = entries[entries.length - 1]!.id;
      this.quietSince = Date.now();
      this.lookAfterMs = FIRST_LOOK_MS;
      const now = Date.now();
      return {
        events: entries.flatMap((e) => this.sequencer.accept(e.event)),
        lagsMs: entries
          .filter((e) => entryTimeMs(e.id) >= this.startedMs)
          .map((e) => now - entryTimeMs(e.id)),
      };
    }
    if (closed) return { events: await this.synthesize(this.outcome!), lagsMs: [] };
    if (Date.now() - this.quietSince >= this.lookAfterMs) {
      this.quietSince = Date.now();
      this.lookAfterMs = Math.min(this.lookAfterMs * 2, LONGEST_LOOK_MS);
      this.outcome = await this.closedOutcome();
    }
    return { events: [], lagsMs: [] };
  }

  /** The workflow's outcome if it has closed; undefined while it runs or Temporal is out of reach. */
  private async closedOutcome(): Promise<Outcome | undefined> {
    try {
      const { status } = await this.handle.describe();
      if (status.name === 'RUNNING') return undefined;
      return { ok: true, result: (await this.handle.result()) as ExecutionResult };
    } catch (error) {
      if (error instanceof WorkflowFailedError || error instanceof WorkflowNotFoundError)
        return { ok: false, error };
      return undefined;
    }
  }

  private async synthesize(outcome: Outcome): Promise<ClientEvent[]> {
    if (!outcome.ok) {
      const failure = describeFailure(
        outcome.error instanceof WorkflowFailedError ? outcome.error.cause : outcome.error,
      );
      return [this.sequencer.synthesize({ type: 'error', status: failure.status, detail: failure.detail })];
    }
    const answer = await this.executions.getPayload<StoredAnswer>(outcome.result.answerPayloadId);
    if (!answer) {
      return [
        this.sequencer.synthesize({ type: 'error', status: 410, detail: 'The answer is no longer retained' }),
      ];
    }
    return this.sequencer.recover(answer.text, outcome.result.usage, answer.incomplete_details);
  }
}
