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

  /**
   * Queues a delta (`through`: its model event's sequence number); throws the relay's failure of
   * an earlier publish. An empty delta (vLLM, Ollama, LiteLLM and proxies send them) queues nothing
   * and starts nothing: it has no text to relay, and the next text's number covers its own.
   */
  push(text: string, through?: number): void {
    if (this.failure) throw this.failure;
    if (text === '') return;
    this.pending += text;
    if (through !== undefined) this.pendingThrough = through;
    this.schedule();
  }

  /** Publishes what is queued now, without waiting for the window; rejects with the relay's failure. */
  async flush(): Promise<void> {
    await this.settled();
    if (this.failure) throw this.failure;
  }

  /**
   * Resolves once everything queued is published (or the relay failed), without waiting for the
   * window. Each turn awaits a publish in flight, so it never spins: with nothing in flight and
   * nothing queued it returns.
   */
  async settled(): Promise<void> {
    while (!this.failure) {
      if (this.pending) this.start();
      if (!this.inFlight) return;
      await this.inFlight;
    }
  }

  /** After a push or a publish: what is queued goes out now, or when the window since the last publish ends. */
  private schedule(): void {
    if (!this.pending || this.inFlight || this.timer || this.failure) return;
    const wait = this.lastPublishAt + this.windowMs - Date.now();
    if (wait <= 0) this.start();
    else this.timer = setTimeout(() => this.start(), wait);
  }

  /** Publishes what is queued, unless a publish is in flight (its end schedules the rest). */
  private start(): void {
    if (this.inFlight || !this.pending || this.failure) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    // Set and cleared here, by whoever started it: the publish settles on a later tick at the
    // earliest, so `inFlight` always names a publish still running.
    const publishing = this.publishPending();
    this.inFlight = publishing;
    void publishing.then(() => {
      this.inFlight = undefined;
      this.schedule();
    });
  }

  /** One relay event with everything queued; never rejects (the failure fails later pushes). */
  private async publishPending(): Promise<void> {
    const text = this.pending;
    const through = this.pendingThrough;
    this.pending = '';
    this.pendingThrough = undefined;
    this.lastPublishAt = Date.now();
    try {
      await this.publish({
        type: 'delta',
        attempt: this.attempt,
        text,
        n: ++this.deltas,
        ...(through !== undefined ? { through } : {}),
      });
      if (through !== undefined) this.relayed(through);
    } catch (err) {
      this.failure = err;
    }
  }
}
