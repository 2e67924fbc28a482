// The CPU of the PostgreSQL backends serving one database, from /proc: the processes whose title
// (`postgres: <cluster>: <user> <database> <client> <state>`, update_process_title) names it,
// sampled every second across a phase so that a backend that starts meanwhile counts from zero
// and one that exits counts to its last sample. Work the server does for every database
// (WAL writer, checkpointer, autovacuum) is not in it; cpu.ts has the whole server.
import { readFileSync, readdirSync } from 'node:fs';
import { procStat } from './cpu';
import { round } from './report';

/** CPU seconds so far of each backend of `database`. */
function backends(database: string): Map<string, number> {
  const found = new Map<string, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return found; // not Linux
  }
  for (const pid of pids) {
    const st = procStat(pid);
    if (st?.comm !== 'postgres') continue;
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').split(/\s+/);
      if (title.includes(database)) found.set(pid, st.self);
    } catch {
      // gone
    }
  }
  return found;
}

/** Starts metering `database`'s backends; `stop()` answers their CPU seconds since. */
export function meterDatabaseCpu(database: string): { stop(): number } {
  const first = backends(database);
  const last = new Map(first);
  const sample = () => {
    for (const [pid, seconds] of backends(database)) {
      if (!first.has(pid)) first.set(pid, 0);
      last.set(pid, seconds);
    }
  };
  const timer = setInterval(sample, 1000);
  return {
    stop() {
      clearInterval(timer);
      sample();
      let total = 0;
      for (const [pid, seconds] of last) total += seconds - first.get(pid)!;
      return round(total, 2);
    },
  };
}
