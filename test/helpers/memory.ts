// How much the test process's RSS grows while a test runs something in it (issue 33's large
// answers, on the in-process stack, so the process that runs the model activity): sampled as it
// runs, from a baseline taken right after a full garbage collection, so that what earlier tests
// left for the collector neither hides nor inflates this run's growth (unmeasured, the same 1 MB
// answer showed 44 to 67 MB; from a collected heap, 23 MB).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/** V8's collector, exposed at run time: jest is not started with --expose-gc. */
function collect(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

/** Runs `body`, which calls `sample` as often as it can; the most RSS grew above the baseline, in MB. */
export async function rssGrowthWhile<T>(
  body: (sample: () => void) => Promise<T>,
): Promise<{ result: T; growthMb: number }> {
  collect();
  const before = process.memoryUsage().rss;
  let most = before;
  const result = await body(() => (most = Math.max(most, process.memoryUsage().rss)));
  return { result, growthMb: (most - before) / 2 ** 20 };
}
