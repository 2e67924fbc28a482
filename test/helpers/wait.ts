// Waiting in tests, written once: a plain `sleep`, and polling with a deadline that fails naming
// what it waited for. Tests wait on a condition, never on a fixed time that a loaded machine
// could exceed; a sleep is only the pause between two probes.

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface WaitOptions {
  /** Give up after this long; default 15 s (generous: the machine may be loaded). */
  timeoutMs?: number;
  /** Pause between two probes; default 25 ms. */
  intervalMs?: number;
  /** Named in the failure message: "timed out after 15000 ms waiting for <what>". */
  what?: string;
}

/** Polls `probe` until it returns a value (not undefined) and returns that value. */
export async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  { timeoutMs = 15_000, intervalMs = 25, what = 'a condition' }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Polls `predicate` until it holds. */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  options: WaitOptions = {},
): Promise<void> {
  await until(async () => ((await predicate()) ? true : undefined), options);
}
