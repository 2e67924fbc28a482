// Reads one execution's relay log as client events (SPEC §9.5/9.6), from the start. The relay
// is the fast path; the workflow's outcome is the backstop: when the workflow has closed and
// the log holds no terminal event, the reader makes one up from the outcome and stored answer.
import { WorkflowFailedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { ExecutionStore } from '../db/execution-store';
import { EventSequencer, type ClientEvent } from '../domain/stream-events';
import { entryTimeMs, RELAY_START, type Relay } from '../infra/relay';
import type { ExecutionResult } from '../workflows/contracts';
import { describeFailure } from '../workflows/describe-failure';

type Outcome = { ok: true; result: ExecutionResult } | { ok: false; error: unknown };

export interface ReadBatch {
  events: ClientEvent[];
  /** Relay append → read delay of each entry (ms), for the relay-lag metric. */
  lagsMs: number[];
}

export class ExecutionReader {
  readonly sequencer = new EventSequencer();
  private cursor = RELAY_START;
  /** Entries appended before this reader started are a replay, not relay lag. */
  private readonly startedMs = Date.now();
  private outcome: Outcome | undefined;

  constructor(
    private readonly relay: Relay,
    private readonly executions: ExecutionStore,
    private readonly executionId: string,
    handle: WorkflowHandle,
  ) {
    this.watch(handle);
  }

  /** Learns the workflow's outcome; a transient Temporal error is not an outcome, so it asks again. */
  private watch(handle: WorkflowHandle): void {
    handle.result().then(
      (result: ExecutionResult) => (this.outcome = { ok: true, result }),
      (error: unknown) => {
        if (error instanceof WorkflowFailedError || error instanceof WorkflowNotFoundError) {
          this.outcome = { ok: false, error };
        } else if (!this.finished) {
          setTimeout(() => this.watch(handle), 1000).unref();
        }
      },
    );
  }

  get finished(): boolean {
    return this.sequencer.terminated;
  }

  /** The next events (possibly none while waiting); never called after `finished`. */
  async next(blockMs: number): Promise<ReadBatch> {
    const closed = this.outcome !== undefined;
    const entries = await this.relay.read(this.executionId, this.cursor, closed ? 0 : blockMs);
    if (entries.length > 0) {
      this.cursor = entries[entries.length - 1]!.id;
      const now = Date.now();
      return {
        events: entries.flatMap((e) => this.sequencer.accept(e.event)),
        lagsMs: entries
          .filter((e) => entryTimeMs(e.id) >= this.startedMs)
          .map((e) => now - entryTimeMs(e.id)),
      };
    }
    if (closed) return { events: await this.synthesize(this.outcome!), lagsMs: [] };
    return { events: [], lagsMs: [] };
  }

  private async synthesize(outcome: Outcome): Promise<ClientEvent[]> {
    if (!outcome.ok) {
      const failure = describeFailure(
        outcome.error instanceof WorkflowFailedError ? outcome.error.cause : outcome.error,
      );
      return [this.sequencer.synthesize({ type: 'error', status: failure.status, detail: failure.detail })];
    }
    const answer = await this.executions.getPayload<{ text: string }>(outcome.result.answerPayloadId);
    if (!answer) {
      return [
        this.sequencer.synthesize({ type: 'error', status: 410, detail: 'The answer is no longer retained' }),
      ];
    }
    return this.sequencer.recover(answer.text, outcome.result.usage);
  }
}
