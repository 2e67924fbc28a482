// Stops the Temporal dev server if this run started it.
import { readFileSync, rmSync } from 'node:fs';
import { TEMPORAL_PID_FILE } from './services';

export default async function globalTeardown(): Promise<void> {
  let pid: string;
  try {
    pid = readFileSync(TEMPORAL_PID_FILE, 'utf8').trim();
  } catch {
    return;
  }
  rmSync(TEMPORAL_PID_FILE, { force: true });
  if (/^\d+$/.test(pid)) {
    try {
      process.kill(Number(pid), 'SIGTERM');
    } catch {
      // already gone
    }
  }
}
