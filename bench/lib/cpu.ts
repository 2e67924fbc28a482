// CPU and memory accounting of the benchmarks from Linux /proc (elsewhere the figures are null):
// per process, PostgreSQL as a whole, the Temporal dev server on a port, the whole machine.
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { TEMPORAL_ADDRESS } from './env';
import { round } from './report';

const CLOCK_TICKS = 100;

export function procStat(pid: string): { comm: string; ppid: string; self: number; children: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const f = text.slice(close + 2).split(' ');
    // fields after the comm: state ppid ... utime(12) stime(13) cutime(14) cstime(15)
    return {
      comm,
      ppid: f[1]!,
      self: (Number(f[11]) + Number(f[12])) / CLOCK_TICKS,
      children: (Number(f[13]) + Number(f[14])) / CLOCK_TICKS,
    };
  } catch {
    return null;
  }
}

function listPids(): string[] {
  try {
    return readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
}

export interface CpuSnapshot {
  wall: number;
  node: number;
  postgres: number | null;
  temporal: number | null;
  machine: number | null;
}

/**
 * CPU seconds used so far by this process, the local PostgreSQL (postmaster and backends,
 * exited backends included through the postmaster's children times), the Temporal dev server on
 * `temporalPort` and the whole machine. Other work on the machine (another test run on the same
 * PostgreSQL) would be counted too.
 */
export function cpuSnapshot(temporalPort = TEMPORAL_ADDRESS.split(':').pop()): CpuSnapshot {
  const own = process.cpuUsage();
  const snapshot: CpuSnapshot = {
    wall: Number(process.hrtime.bigint()) / 1e9,
    node: (own.user + own.system) / 1e6,
    postgres: null,
    temporal: null,
    machine: null,
  };
  const stats = new Map<string, NonNullable<ReturnType<typeof procStat>>>();
  for (const pid of listPids()) {
    const st = procStat(pid);
    if (st) stats.set(pid, st);
  }
  let postgres = 0;
  let found = false;
  for (const [, st] of stats) {
    if (st.comm !== 'postgres') continue;
    found = true;
    const parent = stats.get(st.ppid);
    postgres += st.self + (parent?.comm === 'postgres' ? 0 : st.children);
  }
  if (found) snapshot.postgres = postgres;
  if (temporalPort) {
    for (const [pid, st] of stats) {
      if (st.comm !== 'temporal') continue;
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const i = args.indexOf('--port');
        if (args.includes('start-dev') && i >= 0 && args[i + 1] === temporalPort) snapshot.temporal = st.self;
      } catch {
        // gone
      }
    }
  }
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait
    snapshot.machine = (cpu.reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!) / CLOCK_TICKS;
  } catch {
    // not Linux
  }
  return snapshot;
}

/**
 * CPU seconds between two snapshots, per component, and the wall time. `other_s` is what the
 * rest of the machine used meanwhile (other processes: a concurrent test run, say).
 */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot) {
  const d = (x: number | null, y: number | null) => (x === null || y === null ? null : round(y - x, 1));
  const node = round(b.node - a.node, 1);
  const postgres = d(a.postgres, b.postgres);
  const temporal = d(a.temporal, b.temporal);
  const busy = d(a.machine, b.machine);
  const wall = round(b.wall - a.wall, 1);
  return {
    wall_s: wall,
    available_s: round(wall * os.cpus().length, 1),
    machine_busy_s: busy,
    node_s: node,
    postgres_s: postgres,
    temporal_s: temporal,
    other_s: busy === null ? null : round(busy - node - (postgres ?? 0) - (temporal ?? 0), 1),
  };
}

/** CPU seconds (user + system) a process has used so far, or null. */
export const cpuSeconds = (pid: number | undefined): number | null =>
  pid ? (procStat(String(pid))?.self ?? null) : null;

/** Resident set size of a process in bytes, or null. */
export function rssBytes(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}
