// The model streams this worker process runs, by execution: a stop notice (infra/stop-notices.ts)
// for an execution stops each of them, whichever attempt it is.
export class RunningStreams {
  private readonly stops = new Map<string, Set<() => void>>();

  /** Registers a stream's stop; the returned function unregisters it. */
  add(executionId: string, stop: () => void): () => void {
    let set = this.stops.get(executionId);
    if (!set) this.stops.set(executionId, (set = new Set()));
    set.add(stop);
    return () => {
      set.delete(stop);
      if (set.size === 0 && this.stops.get(executionId) === set) this.stops.delete(executionId);
    };
  }

  /** Stops every stream of the execution in this process. */
  stop(executionId: string): void {
    for (const stop of [...(this.stops.get(executionId) ?? [])]) stop();
  }

  /** Streams running now (for metrics and tests). */
  get size(): number {
    let n = 0;
    for (const set of this.stops.values()) n += set.size;
    return n;
  }
}
