// Tools of the fault-injection suite (test/reliability), beside the seeded agent and its streams
// (test/helpers/agent-streams.ts): records and histories read without timing assertions, and
// the faults themselves: private Redis and Temporal servers that a test kills and restarts, and
// PostgreSQL connections terminated under the processes.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Client as PgClient } from 'pg';
import type { FakeModelServer } from '../fakes/fake-model-server';
import { expectCleanAnswer, resets } from '../helpers/agent-streams';
import { localActivityMarkers } from '../helpers/history-text';
import { ROOT, TEMPORAL_ADDRESS } from '../helpers/services';
import { freePort } from '../helpers/ports';
import { sleep, until, waitFor } from '../helpers/wait';

// ---- records and history ------------------------------------------------------------------------

/** Polls the execution record (PostgreSQL) until it leaves `running`. */
export async function finishedRecord(databaseUrl: string, executionId: string, timeoutMs = 40_000) {
  const db = new PgClient({ connectionString: databaseUrl });
  await db.connect();
  try {
    return await until(
      async () => {
        const row = (
          await db.query<{ status: string; attempts: number }>(
            'SELECT status, attempts FROM executions WHERE id = $1',
            [executionId],
          )
        ).rows[0];
        return row && row.status !== 'running' ? { status: row.status, attempts: row.attempts } : undefined;
      },
      { what: `execution ${executionId} to finish`, timeoutMs, intervalMs: 100 },
    );
  } finally {
    await db.end();
  }
}

export interface ActivityRun {
  /** The attempt that ended the activity. */
  attempt: number;
  /** What ended the attempt before it: an application failure type or a timeout type. */
  previousFailure: string | undefined;
}

/**
 * The finished runs of an activity type in a workflow's history, once there are `count` of them.
 * Temporal records only the last attempt of a retried activity (when it ends), with the failure
 * of the attempt before it.
 */
export async function activityRuns(
  address: string,
  workflowId: string,
  activity: string,
  count = 1,
): Promise<ActivityRun[]> {
  const connection = await Connection.connect({ address });
  try {
    const handle = new TemporalClient({ connection }).workflow.getHandle(workflowId);
    return await until(
      async () => {
        const runs = runsIn(await handle.fetchHistory(), activity);
        return runs.length >= count ? runs : undefined;
      },
      { what: `${count} finished ${activity} activities`, timeoutMs: 30_000, intervalMs: 200 },
    );
  } finally {
    await connection.close();
  }
}

/**
 * The attempts that ended each run of a local activity type, from its markers (the SDK records
 * a local activity once, when it ends, with its attempt number in plain JSON).
 */
export async function localActivityAttempts(
  address: string,
  workflowId: string,
  activity: string,
): Promise<number[]> {
  const connection = await Connection.connect({ address });
  try {
    const history = await new TemporalClient({ connection }).workflow.getHandle(workflowId).fetchHistory();
    return localActivityMarkers(history.events ?? [])
      .filter((m) => m.activity_type === activity)
      .map((m) => m.attempt);
  } finally {
    await connection.close();
  }
}

/** One sample of a Prometheus text exposition (0 when absent). */
export function metricSample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The finished runs of an activity type in a history (see `activityRuns`). */
export function runsIn(history: temporal.api.history.v1.IHistory, activity: string): ActivityRun[] {
  const scheduled = new Map<string, string>();
  const runs: ActivityRun[] = [];
  for (const event of history.events ?? []) {
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type) scheduled.set(String(event.eventId), type);
    const started = event.activityTaskStartedEventAttributes;
    if (started && scheduled.get(String(started.scheduledEventId)) === activity) {
      const failure = started.lastFailure;
      const timeout = failure?.timeoutFailureInfo?.timeoutType;
      runs.push({
        attempt: started.attempt ?? 1,
        previousFailure:
          failure?.applicationFailureInfo?.type ??
          (timeout != null ? `timeout:${temporal.api.enums.v1.TimeoutType[timeout]}` : undefined),
      });
    }
  }
  return runs;
}

// ---- faults -------------------------------------------------------------------------------------

/** Servers started by this test file; killed when the process exits, even after a crash of jest's. */
const servers = new Set<number>();
process.once('exit', () => {
  for (const pid of servers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** EXCLUSIVE holds writes (reads pass); ACCESS EXCLUSIVE holds reads too. */
export type LockMode = 'EXCLUSIVE' | 'ACCESS EXCLUSIVE';

/**
 * A lock held on a table of a test database, so that a query of the processes is certainly in
 * flight when connections are dropped: each query that queues behind the lock is killed, with
 * every other connection to the database, until the lock is released.
 */
export class TableLock {
  private readonly killed = new Set<number>();
  private released = false;

  private constructor(
    private readonly db: PgClient,
    private readonly table: string,
  ) {}

  static async take(databaseUrl: string, table: string, mode: LockMode): Promise<TableLock> {
    const db = new PgClient({ connectionString: databaseUrl });
    await db.connect();
    await db.query('BEGIN');
    await db.query(`LOCK TABLE ${table} IN ${mode} MODE`);
    return new TableLock(db, table);
  }

  /**
   * `times` times: waits for a new query blocked on the table, then terminates every other
   * connection to the database (the processes' pools included).
   */
  async dropBlocked(times: number, timeoutMs = 30_000): Promise<void> {
    for (let n = 1; n <= times; n++) {
      const pid = await until(
        async () => {
          const { rows } = await this.db.query<{ pid: number }>(
            // Databases cloned from one template share relation oids: name the database too.
            `SELECT pid FROM pg_locks WHERE NOT granted AND relation = $1::regclass
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
            [this.table],
          );
          return rows.map((r) => r.pid).find((p) => !this.killed.has(p));
        },
        { what: `query ${n} blocked on ${this.table}`, timeoutMs },
      );
      // pg_stat_activity is a snapshot kept for the transaction: take a fresh one. The
      // function is in the select list, not the WHERE clause: only the rows kept are terminated.
      await this.db.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await this.db.query<{ pid: number }>(
        `SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      for (const row of rows) this.killed.add(row.pid);
      expect(this.killed.has(pid)).toBe(true);
    }
  }

  /** Lets the queries through (idempotent). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.db.query('ROLLBACK').catch(() => undefined);
    await this.db.end();
  }
}

/** Runs `body` while `table` is locked; the lock is released even when `body` fails. */
export async function whileLocked(
  databaseUrl: string,
  table: string,
  mode: LockMode,
  body: (lock: TableLock) => Promise<void>,
): Promise<void> {
  const lock = await TableLock.take(databaseUrl, table, mode);
  try {
    await body(lock);
  } finally {
    await lock.release();
  }
}

/**
 * The local processes' TCP connections that `ss` lists for `filter` (e.g. `src 127.0.0.1:PORT`,
 * `dst 127.0.0.1:PORT`): the pid owning each, by the connection's local port.
 */
function connectionOwners(...filter: string[]): Map<number, number> {
  const out = execFileSync('ss', ['-Htnp', ...filter], { encoding: 'utf8' });
  const pids = new Map<number, number>();
  for (const line of out.split('\n')) {
    const local = /127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:\d+/.exec(line)?.[1];
    const pid = /pid=(\d+)/.exec(line)?.[1];
    if (local && pid) pids.set(Number(local), Number(pid));
  }
  return pids;
}

/** The pid of the local process that owns TCP port `port` of a connection. */
export const pidOfLocalPort = (port: number): number | undefined =>
  connectionOwners('src', `127.0.0.1:${port}`).get(port);

/** The pid of each local process connected to `port`, by the process's own port. */
export const connectionsTo = (port: number): Map<number, number> =>
  connectionOwners('dst', `127.0.0.1:${port}`);

/**
 * The pid of the process that sent model request `index` of `model` (the worker streaming it),
 * once the request arrived and while its connection is open; -1 when the connection is gone.
 */
export const senderOfModelRequest = (fake: FakeModelServer, model: string, index: number): Promise<number> =>
  until(
    () => {
      const request = fake.requestsFor(model)[index];
      return request ? (pidOfLocalPort(request.remotePort!) ?? -1) : undefined;
    },
    { what: `model request ${index + 1}`, timeoutMs: 30_000 },
  );

/** Two model calls: the first cut off (its worker gone), the retry asked the same and completed. */
export function expectRetriedModelCall(fake: FakeModelServer, model: string): void {
  const requests = fake.requestsFor(model);
  expect(requests.map((r) => r.aborted)).toEqual([true, false]);
  expect(requests[1]!.body).toEqual(requests[0]!.body);
}

/**
 * A worker died mid-stream and another finished the answer: the client saw the first attempt's
 * text, one `reset` (after `beforeKill` events), then attempt 2's full answer once; the model was
 * asked twice (the first cut off); attempt 2 started because attempt 1 stopped heartbeating (not
 * the start-to-close timeout); and the record ends succeeded after 2 attempts.
 */
export async function expectRecoveredFromWorkerDeath(run: {
  events: any[];
  executionId: string;
  beforeKill: number;
  answer: string;
  fake: FakeModelServer;
  model: string;
  databaseUrl: string;
}): Promise<void> {
  expectCleanAnswer(run.events, run.answer, 2);
  expect(resets(run.events)).toHaveLength(1);
  expect(run.events.findIndex((e) => e.type === 'reset')).toBeGreaterThanOrEqual(run.beforeKill);
  expectRetriedModelCall(run.fake, run.model);
  expect(await activityRuns(TEMPORAL_ADDRESS, `execution-${run.executionId}`, 'callModel')).toEqual([
    { attempt: 2, previousFailure: 'timeout:TIMEOUT_TYPE_HEARTBEAT' },
  ]);
  expect(await finishedRecord(run.databaseUrl, run.executionId)).toEqual({
    status: 'succeeded',
    attempts: 2,
  });
}

/**
 * A redis-server of one test on its own port and directory, persisting every write (AOF,
 * fsync always) so that a kill loses nothing acknowledged.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(
      await freePort(),
      mkdtempSync(path.join(os.tmpdir(), 'agentry-rel-redis-')),
    );
    await redis.launch();
    return redis;
  }

  private launch(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--daemonize',
        'no',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    const pid = child.pid!;
    servers.add(pid);
    child.once('exit', () => servers.delete(pid));
    let output = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`redis-server did not start:\n${output}`));
      }, 20_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${output}`));
      });
    });
  }

  /** SIGKILL (a crash), then a new server on the same port and directory. */
  async restart(downMs = 0): Promise<void> {
    await this.kill();
    if (downMs > 0) await sleep(downMs);
    await this.launch();
  }

  private kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether `pid` is a live process (a zombie nobody reaped yet is not). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/**
 * A Temporal dev server of one test (scripts/temporal-dev-server.sh) on its own port, persisting
 * to a SQLite file so that a restart keeps every workflow. Never the shared one on 7233.
 */
export class PrivateTemporal {
  private pid: number | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateTemporal> {
    const temporal = new PrivateTemporal(
      await freePort(),
      mkdtempSync(path.join(os.tmpdir(), 'agentry-rel-temporal-')),
    );
    await temporal.launch();
    return temporal;
  }

  private async launch(): Promise<void> {
    const { stdout } = await promisify(execFile)(
      'bash',
      [
        path.join(ROOT, 'scripts/temporal-dev-server.sh'),
        String(this.port),
        this.dir,
        '--headless',
        '--db-filename',
        path.join(this.dir, 'temporal.db'),
      ],
      { encoding: 'utf8' },
    );
    const pid = stdout.trim();
    if (!/^\d+$/.test(pid)) throw new Error(`expected a new dev server on ${this.address}, got "${pid}"`);
    this.pid = Number(pid);
    servers.add(this.pid);
  }

  private async kill(signal: NodeJS.Signals): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) return;
    try {
      process.kill(pid, signal);
    } catch {
      return; // already gone
    }
    await waitFor(() => !isRunning(pid), { what: `dev server ${pid} to exit` });
    servers.delete(pid);
    this.pid = undefined;
  }

  /**
   * SIGKILL (a crash), then, `downMs` later, a new dev server on the same port and database file;
   * `starting` runs as soon as it is launched, while it starts.
   */
  async restart(downMs = 0, starting?: () => void): Promise<void> {
    await this.kill('SIGKILL');
    await sleep(downMs);
    const launched = this.launch();
    starting?.();
    await launched;
  }

  async stop(): Promise<void> {
    await this.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
