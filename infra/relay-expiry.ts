// When a relay stream's expiry is set (SPEC §9.6: the log lives 1 h after its last event): with
// an execution's first event, on its terminal event (`done`/`error`), and again only when an
// execution streams longer than REFRESH_MS, instead of a PEXPIRE with every event.
//
// A non-terminal event sets TTL + REFRESH_MS, and this process sets it again once REFRESH_MS
// passed, so the stream always outlives any event by ≥ 1 h even when no terminal event follows
// (a worker killed for good); the terminal event sets exactly 1 h. Each process keeps its own
// book: a retried attempt on another worker sets the expiry once more, which is harmless.
import { RELAY_TTL_MS } from './relay';

export const REFRESH_MS = 600_000;

export class RelayExpiry {
  /** When this process last set each stream's expiry, oldest first. */
  private readonly setAt = new Map<string, number>();

  /** The expiry (ms) to set with this event, or undefined when the one set lately still covers it. */
  due(executionId: string, terminal: boolean): number | undefined {
    if (terminal) return RELAY_TTL_MS;
    const at = this.setAt.get(executionId);
    return at === undefined || Date.now() - at >= REFRESH_MS ? RELAY_TTL_MS + REFRESH_MS : undefined;
  }

  /** Records an expiry that Redis applied. */
  set(executionId: string, terminal: boolean): void {
    const now = Date.now();
    this.setAt.delete(executionId);
    if (!terminal) this.setAt.set(executionId, now);
    // Entries older than the refresh period are due anyway: forgetting them changes nothing.
    for (const [id, at] of this.setAt) {
      if (now - at < REFRESH_MS) break;
      this.setAt.delete(id);
    }
  }
}
