// The model activity's deltas on their way to the relay, batched in time: the first delta of a
// stream goes out at once; later ones wait until `windowMs` after the last publish began, and
// everything that arrived by then goes out as one relay event (one encryption, one append, one
// read and one write to each client). One publish at a time, in order; the model's stream is never
// held up by the relay. With tokens 20 ms apart and a 30 ms window, events carry about two tokens;
// with tokens 100 ms apart each still goes out on its own, at once (docs/decisions.md).
import type { RelayEvent } from '../domain/stream-events';

export class DeltaBatcher {
  private pending = '';
  /** The provider's sequence number of the last queued delta (resumable mode). */
  private pendingThrough: number | undefined;
  private deltas = 0;
  private inFlight: Promise<void> | undefined;
  private failure: unknown;
  private lastPublishAt = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly attempt: number,
    private readonly publish: (event: RelayEvent) => Promise<void>,
    private readonly windowMs = 0,
    /** Told the `through` of each delta event once it is relayed. */
    private readonly relayed: (through: number) => void = () => undefined,
  ) {}

  /** Queues a delta (`through`: its model event's sequence number); throws the relay's failure of an earlier publish. */
  push(text: string, through?: number): void {
    if (this.failure) throw this.failure;
    this.pending += text;
    if (through !== undefined) this.pendingThrough = through;
    if (this.inFlight || this.timer) return;
    const wait = this.lastPublishAt + this.windowMs - Date.now();
    if (wait <= 0) this.inFlight = this.drain();
    else this.timer = setTimeout(() => this.start(), wait);
  }

  /** Publishes what is queued now, without waiting for the window; rejects with the relay's failure. */
  async flush(): Promise<void> {
    await this.settled();
    if (this.failure) throw this.failure;
  }

  /** Resolves once everything queued is published (or the relay failed), without waiting for the window. */
  async settled(): Promise<void> {
    while (!this.failure && (this.timer || this.inFlight)) {
      if (this.timer) this.start();
      await this.inFlight;
    }
  }

  private start(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.inFlight) this.inFlight = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending) {
        const text = this.pending;
        const through = this.pendingThrough;
        this.pending = '';
        this.lastPublishAt = Date.now();
        await this.publish({
          type: 'delta',
          attempt: this.attempt,
          text,
          n: ++this.deltas,
          ...(through !== undefined ? { through } : {}),
        });
        if (through !== undefined) this.relayed(through);
        const wait = this.lastPublishAt + this.windowMs - Date.now();
        // What arrived meanwhile waits out the rest of the window, unless flushed.
        if (this.pending && wait > 0) {
          this.timer = setTimeout(() => this.start(), wait);
          break;
        }
      }
    } catch (err) {
      this.failure = err;
    } finally {
      this.inFlight = undefined;
    }
  }
}
