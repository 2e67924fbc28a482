// The Temporal latency settings (docs/operations.md "Temporal server settings") where each server
// is configured: the compose stack's dynamic config and the one script that starts every dev
// server (npm start, npm test, the benchmarks). Without them every task hand-off waits ≈ 35 ms.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const root = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

it('the compose dynamic config raises the transfer-queue poll rate and enables eager activities, and leaves partitions at the server default', () => {
  const config = parse(read('deploy/temporal/dynamicconfig.yaml')) as Record<string, { value: unknown }[]>;
  expect(config['history.transferProcessorMaxPollRPS']?.[0]?.value).toBe(10000);
  expect(config['system.enableActivityEagerExecution']?.[0]?.value).toBe(true);
  expect(config['matching.numTaskqueueReadPartitions']).toBeUndefined();
});

it('every dev server starts with the poll rate, eager activities, one partition, and WAL for a SQLite file', () => {
  const script = read('scripts/temporal-dev-server.sh');
  for (const setting of [
    'history.transferProcessorMaxPollRPS=10000',
    'system.enableActivityEagerExecution=true',
    'matching.numTaskqueueReadPartitions=1',
    'matching.numTaskqueueWritePartitions=1',
  ])
    expect(script).toContain(`--dynamic-config-value ${setting}`);
  expect(script).toContain('--sqlite-pragma journal_mode=WAL --sqlite-pragma synchronous=NORMAL');
  // npm start goes through the same script instead of spawning the CLI with flags of its own.
  expect(read('embedded.ts')).toContain("'temporal-dev-server.sh'");
  expect(read('embedded.ts')).not.toContain("'start-dev'");
});
