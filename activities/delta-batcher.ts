// The model activity's deltas on their way to the relay: one publish at a time, in order, and the
// deltas that arrive while one is in flight go out together as the next one. A model that streams
// slower than the relay appends (every real one: tokens come ms apart, an append takes < 1 ms)
// gets each delta published as it comes; a burst (a fast or buffering server) costs a few appends
// instead of one per token. The model's stream is never held up by the relay.
import type { RelayEvent } from '../domain/stream-events';

export class DeltaBatcher {
  private pending = '';
  private deltas = 0;
  private inFlight: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private readonly attempt: number,
    private readonly publish: (event: RelayEvent) => Promise<void>,
  ) {}

  /** Queues a delta; throws the relay's failure of an earlier publish. */
  push(text: string): void {
    if (this.failure) throw this.failure;
    this.pending += text;
    if (!this.inFlight) this.inFlight = this.drain();
  }

  /** Resolves once every queued delta is published; rejects with the relay's failure. */
  async flush(): Promise<void> {
    await this.inFlight;
    if (this.failure) throw this.failure;
  }

  /** Resolves once no publish is in flight, whatever its outcome. */
  async settled(): Promise<void> {
    await this.inFlight;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending) {
        const text = this.pending;
        this.pending = '';
        await this.publish({ type: 'delta', attempt: this.attempt, text, n: ++this.deltas });
      }
    } catch (err) {
      this.failure = err;
    } finally {
      this.inFlight = undefined;
    }
  }
}
