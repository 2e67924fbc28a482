// The execution event protocol (SPEC §9.5). Producers publish raw relay events tagged with
// their attempt; the sequencer turns the relay's log into what clients see. Because it is a pure
// function of the log, a re-attaching reader numbers events exactly as the first reader did.

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/**
 * Why the model stopped before finishing its answer (OpenAI's `incomplete_details`, e.g.
 * `max_output_tokens`, `content_filter`): `done` carries it with the text the model gave.
 */
export interface IncompleteDetails {
  reason: string;
}

/**
 * What producers publish to the relay. `start` is internal: the model answered 200 (`response`:
 * the provider's background response, resumable mode). `resume` (resumable mode, issue 27) starts
 * an attempt that continues a background response whose text so far is `text`: readers whose text
 * is exactly that carry on without a `reset`; others start over with `text`.
 */
export type RelayEvent =
  | { type: 'start'; attempt: number; response?: string }
  | { type: 'resume'; attempt: number; text: string; response: string; through?: number }
  /**
   * `n` numbers an attempt's deltas from 1: a delta the relay holds twice (a command resent after
   * a lost reply) is dropped by readers instead of repeating text. `through`: the provider's
   * sequence number of the last model event in it (resumable mode).
   */
  | { type: 'delta'; attempt: number; text: string; n?: number; through?: number }
  | {
      type: 'done';
      attempt: number;
      usage: Usage;
      incomplete_details?: IncompleteDetails;
      extra?: Record<string, unknown>;
    }
  | { type: 'error'; status: number; detail: string };

/** `done` and `error` end a stream (SPEC §9.5): nothing a client sees follows them. */
export const isTerminal = (event: RelayEvent): boolean => event.type === 'done' || event.type === 'error';

/** What clients receive. */
export type ClientEvent =
  | { type: 'delta'; seq: number; attempt: number; text: string }
  | { type: 'reset'; seq: number; attempt: number }
  | {
      type: 'done';
      seq: number;
      attempt: number;
      usage: Usage;
      incomplete_details?: IncompleteDetails;
      [extra: string]: unknown;
    }
  | { type: 'error'; seq: number; status: number; detail: string };

export class EventSequencer {
  private seq = 0;
  private highestAttempt = 0;
  private textSentThisAttempt = false;
  /** Highest delta number `n` accepted in the current attempt. */
  private lastDelta = 0;
  /** The model answered 200 at least once. */
  started = false;
  /** A terminal event (`done` or `error`) was emitted; nothing follows it. */
  terminated = false;
  /** The answer so far (since the last reset). */
  text = '';
  /**
   * Resumable mode: the background response the text comes from, and the provider's sequence
   * number of its last relayed event (undefined: none relayed yet).
   */
  response: string | undefined;
  through: number | undefined;

  /** The highest attempt whose events were accepted (0 before any). */
  get attempt(): number {
    return this.highestAttempt;
  }

  accept(event: RelayEvent): ClientEvent[] {
    if (this.terminated) return [];
    if (event.type === 'error')
      return [this.terminal({ type: 'error', seq: ++this.seq, status: event.status, detail: event.detail })];
    if (event.attempt < this.highestAttempt) return []; // a zombie attempt cannot interleave
    const out: ClientEvent[] = [];
    if (event.attempt > this.highestAttempt) {
      this.highestAttempt = event.attempt;
      this.lastDelta = 0;
      // A resume of the text this reader has continues it: no reset, nothing to repeat.
      if (!(event.type === 'resume' && event.text === this.text)) {
        if (this.textSentThisAttempt) out.push({ type: 'reset', seq: ++this.seq, attempt: event.attempt });
        this.textSentThisAttempt = false;
        this.text = '';
        this.response = this.through = undefined;
      }
    }
    switch (event.type) {
      case 'start':
        this.started = true;
        this.response = event.response;
        break;
      case 'resume':
        this.started = true;
        this.response = event.response;
        this.through = event.through;
        if (this.text !== event.text && event.text !== '') {
          this.textSentThisAttempt = true;
          this.text = event.text;
          out.push({ type: 'delta', seq: ++this.seq, attempt: event.attempt, text: event.text });
        }
        this.textSentThisAttempt = this.text !== '';
        break;
      case 'delta':
        if (event.n !== undefined) {
          if (event.n <= this.lastDelta) return out; // the same delta stored twice
          this.lastDelta = event.n;
        }
        if (event.through !== undefined) this.through = event.through;
        this.textSentThisAttempt = true;
        this.text += event.text;
        out.push({ type: 'delta', seq: ++this.seq, attempt: event.attempt, text: event.text });
        break;
      case 'done':
        out.push(
          // Extra fields of the final event (the gateway's executionChain, PC-9) come after ours.
          this.terminal({
            ...event.extra,
            type: 'done',
            seq: ++this.seq,
            attempt: event.attempt,
            usage: event.usage,
            ...(event.incomplete_details ? { incomplete_details: event.incomplete_details } : {}),
          }),
        );
        break;
    }
    return out;
  }

  /** A terminal event made up by a reader when the workflow closed without publishing one. */
  synthesize(
    terminal:
      | { type: 'error'; status: number; detail: string }
      | { type: 'done'; usage: Usage; incomplete_details?: IncompleteDetails },
  ): ClientEvent {
    return terminal.type === 'error'
      ? this.terminal({ type: 'error', seq: ++this.seq, status: terminal.status, detail: terminal.detail })
      : this.terminal({
          ...terminal,
          seq: ++this.seq,
          // Attempts count from 1, also when no event of any attempt reached the relay.
          attempt: Math.max(this.highestAttempt, 1),
        });
  }

  /**
   * The workflow succeeded but its `done` never reached the relay (e.g. Redis lost the stream):
   * bring the client to the stored answer, then end.
   */
  recover(answer: string, usage: Usage, incomplete?: IncompleteDetails): ClientEvent[] {
    if (this.terminated) return [];
    const out: ClientEvent[] = [];
    if (this.text !== answer) {
      const attempt = Math.max(this.highestAttempt, 1);
      if (this.textSentThisAttempt) out.push({ type: 'reset', seq: ++this.seq, attempt });
      this.text = answer;
      this.textSentThisAttempt = answer !== '';
      if (answer !== '') out.push({ type: 'delta', seq: ++this.seq, attempt, text: answer });
    }
    out.push(
      this.synthesize({ type: 'done', usage, ...(incomplete ? { incomplete_details: incomplete } : {}) }),
    );
    return out;
  }

  private terminal(event: ClientEvent): ClientEvent {
    this.terminated = true;
    return event;
  }
}

/**
 * What a retry publishes to end the stream when an earlier attempt already stored the answer but
 * its completion was lost (its worker died after storing it, or Temporal gave up on it while it
 * streamed on). `log` is what the relay holds. Readers, live and re-attaching alike, must end
 * with the stored answer once, and see `reset` only when their text restarts (§9.5): so when the
 * log already carries the whole answer, only `done` follows, under the attempt that sent it;
 * otherwise (part of it lost, or a later attempt started over) the whole answer follows under
 * `attempt`, which readers that had text see after a `reset`. Nothing when the stream has ended.
 */
export function closingEvents(
  log: RelayEvent[],
  answer: { text: string; usage: Usage; incomplete_details?: IncompleteDetails },
  attempt: number,
  extra?: Record<string, unknown>,
): RelayEvent[] {
  const sequencer = new EventSequencer();
  for (const event of log) sequencer.accept(event);
  if (sequencer.terminated) return [];
  const done = (at: number): RelayEvent => ({
    type: 'done',
    attempt: at,
    usage: answer.usage,
    ...(answer.incomplete_details ? { incomplete_details: answer.incomplete_details } : {}),
    ...(extra ? { extra } : {}),
  });
  if (sequencer.text === answer.text) return [done(Math.max(sequencer.attempt, 1))];
  // Above every attempt in the log, so that no reader drops it as a zombie's.
  const at = Math.max(attempt, sequencer.attempt + 1);
  return [
    ...(answer.text ? [{ type: 'delta' as const, attempt: at, text: answer.text, n: 1 }] : []),
    done(at),
  ];
}
