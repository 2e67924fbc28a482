// `npm start` itself for the quick-start e2e test (npm, scripts/start.sh, dist/embedded.js), on a
// state directory of the test's own, a free API port and none of the test run's services, so it
// starts its own PGlite, in-process relay and Temporal dev server. `process` is npm's own process,
// the one a supervisor signals. Also what is left of it: its process tree and listening ports,
// read from /proc (no `ps` needed).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { ROOT } from './services';

export interface Embedded {
  process: ChildProcess;
  /** Everything it printed, stdout and stderr. */
  output: () => string;
  /** Resolves with the exit code once it has exited. */
  exited: Promise<number | null>;
}

/** Starts it and waits (up to `deadlineMs`) for its "running" banner, printed once everything is up. */
export async function startEmbedded(stateDir: string, port: number, deadlineMs: number): Promise<Embedded> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    // The test run's own services and settings are not the quick start's.
    if (value === undefined || name.startsWith('AGENTRY_')) continue;
    if (['DATABASE_URL', 'REDIS_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'HOST'].includes(name))
      continue;
    env[name] = value;
  }
  Object.assign(env, { PORT: String(port), AGENTRY_STATE_DIR: stateDir });
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    env,
    // Its own process group, as in a terminal, where Ctrl-C signals the whole group.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGINT');
      reject(new Error(`npm start did not start within ${deadlineMs} ms:\n${output}`));
    }, deadlineMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      // The banner is one write whose last lines name the relay (and, on a first run, the key).
      if (/^Database: .*; relay: .*$/m.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code}:\n${output}`));
    });
  });
  return { process: child, output: () => output, exited };
}

interface ProcessInfo {
  pid: number;
  ppid: number;
  state: string;
  args: string;
}

function processTable(): ProcessInfo[] {
  const table: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      table.push({ pid: Number(entry), ppid: Number(ppid), state: state!, args });
    } catch {
      // it ended while we read
    }
  }
  return table;
}

/**
 * The processes of a quick start: `root`, its descendants, and whatever names its state
 * directory on its command line (the Temporal dev server runs detached, its parent long gone).
 * Zombies are gone for this purpose.
 */
export function processesOf(root: number, stateDir?: string): ProcessInfo[] {
  const table = processTable().filter((p) => p.state !== 'Z');
  const found = new Map<number, ProcessInfo>();
  for (const p of table)
    if (p.pid === root || (stateDir !== undefined && p.args.includes(stateDir))) found.set(p.pid, p);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of table)
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.set(p.pid, p);
        grew = true;
      }
  }
  return [...found.values()];
}

/** The TCP ports the processes listen on (their sockets' inodes matched in /proc/net/tcp{,6}). */
export function listeningPorts(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (socket) inodes.add(socket[1]!);
      } catch {
        // closed meanwhile
      }
    }
  }
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // fields: sl local_address rem_address st ... inode (index 9); st 0A = LISTEN.
      if (fields[3] === '0A' && inodes.has(fields[9]!)) ports.add(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** True when something accepts connections on 127.0.0.1:port. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
