// Faults under load (issue 16): clients that execute the seeded agent back to back while a fault
// strikes, and what their runs prove. Each client behaves as a demanding one would: it POSTs each
// execution under an Idempotency-Key (repeated while the API cannot be reached or answers 503)
// and re-attaches a stream cut off before its terminal event after the last event it has
// (Last-Event-ID). Every question carries a token, so the model requests the fake received can be
// told apart per execution.
import { randomBytes } from 'node:crypto';
import { channel } from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import type { FakeModelServer, RecordedRequest } from '../fakes/fake-model-server';
import type { Child } from '../helpers/processes';
import {
  executeAgent,
  expectCleanAnswer,
  expectContinuousAnswer,
  readNdjson,
  resets,
  type SeededAgent,
} from '../helpers/agent-streams';
import type { Api } from '../helpers/http';
import { sleep, until } from '../helpers/wait';
import type { LoadFigures } from '../../bench/lib/fault-figures';
import { percentile } from '../../bench/lib/report';
import { connectionsTo, runsIn } from './support';

/** The product's defaults (infra/config.ts) where the test environment shortens them. */
export const PRODUCT_TIMEOUTS: Record<string, string> = {
  AGENTRY_DB_POOL_MAX: '10',
  AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS: '20000',
  AGENTRY_LLM_NO_PROGRESS_MS: '120000',
  AGENTRY_LLM_START_TO_CLOSE_MS: '600000',
  AGENTRY_LLM_RETRY_INITIAL_MS: '1000',
  AGENTRY_LLM_RETRY_MAX_INTERVAL_MS: '30000',
  AGENTRY_BOOKKEEPING_RETRY_INITIAL_MS: '200',
};

/** How long a client keeps repeating a POST or a re-attachment that cannot get through. */
const RETRY_FOR_MS = 90_000;
const RETRY_PAUSE_MS = 200;

export interface ClientRun {
  client: number;
  token: string;
  executionId: string;
  postedAt: number;
  events: any[];
  /** When each event arrived (epoch ms). */
  arrivals: number[];
  /** Repeated POSTs (the API unreachable or 503) and re-attachments after a cut-off stream. */
  postRetries: number;
  reattachments: number;
  /** Requests that ended without an HTTP status (the connection closed or refused). */
  unanswered: Unanswered[];
  error?: string;
}

/** A request that got no status: when it was sent, and what the client read instead. */
export interface Unanswered {
  sentAt: number;
  failedAt: number;
  what: 'POST' | 're-attach';
  /** undici's error code (UND_ERR_SOCKET: the server closed the connection; ECONNREFUSED). */
  code: string;
  /** The client's port of the connection, to find it in the server's logs. */
  localPort?: number;
}

/** What a fetch that got no status failed with: undici's cause and the socket it used. */
function unanswered(what: Unanswered['what'], sentAt: number, err: unknown): Unanswered {
  const cause = (err as { cause?: { code?: string; message?: string; socket?: { localPort?: number } } })
    .cause;
  return {
    sentAt,
    failedAt: Date.now(),
    what,
    code: cause?.code ?? cause?.message ?? String(err),
    ...(cause?.socket?.localPort !== undefined ? { localPort: cause.socket.localPort } : {}),
  };
}

/**
 * What a fault reports of itself: the worker it killed, when it was stopped and when it exited,
 * and which process held each connection to the model server (by its local port) in between.
 */
export interface FaultReport {
  killed?: { pid: number; stoppedAt: number; exitedAt: number; senders: Map<number, number> };
}

/** How long after a worker's exit the fake may still read a request it sent (socket buffers). */
const DELIVERY_GRACE_MS = 1000;
/**
 * How long before its worker stopped an answer may have been complete and yet not stored (the
 * worker storing it, then completing the attempt): such an attempt died after calling too.
 */
const STORING_WINDOW_MS = 2000;
/**
 * A resumable LLM (issue 27): how long before its worker stopped a background response may have
 * been created and yet its id not have reached the relay (the provider's first event read, the
 * `start` written): only such an attempt's retry has nothing to resume and asks again.
 */
const CREATE_WINDOW_MS = 1000;

export interface LoadRun {
  runs: ClientRun[];
  faultAt: number;
  faultEndedAt: number;
  report: FaultReport;
  /**
   * When the API closed one of the clients' connections (the client read its FIN) during the run,
   * with the client's port. A connection the clients closed themselves is not listed.
   */
  closedByApi: Array<{ at: number; localPort: number | undefined }>;
}

/**
 * Records the connections of this process's fetch (undici) that the other side closes while
 * `recording()` is true; `stop` unsubscribes.
 */
function watchServerCloses(recording: () => boolean): {
  closed: LoadRun['closedByApi'];
  stop: () => void;
} {
  const closed: LoadRun['closedByApi'] = [];
  const connected = channel('undici:client:connected');
  const onConnected = (message: unknown): void => {
    const { socket } = message as { socket: Socket };
    const localPort = socket.localPort;
    socket.once('end', () => {
      if (recording()) closed.push({ at: Date.now(), localPort });
    });
  };
  connected.subscribe(onConnected);
  return { closed, stop: () => connected.unsubscribe(onConnected) };
}

const isTerminal = (event: any): boolean => event?.type === 'done' || event?.type === 'error';

export const isLive = (child: Child): boolean =>
  child.process.exitCode === null && child.process.signalCode === null;

/**
 * SIGKILLs `worker`. It is stopped first (SIGSTOP: it sends nothing more), so that the connections
 * to the model server read meanwhile name every request it ever sent that is still connected.
 */
export async function killWorker(worker: Child, fake: FakeModelServer): Promise<FaultReport> {
  const pid = worker.process.pid!;
  const stoppedAt = Date.now();
  process.kill(pid, 'SIGSTOP');
  const senders = connectionsTo(fake.port);
  await worker.kill('SIGKILL');
  return { killed: { pid, stoppedAt, exitedAt: Date.now(), senders } };
}

/**
 * Blocks this process (the clients) for `ms`: a client whose event loop stalls (a synchronous
 * call, a GC pause) reads nothing meanwhile, not even the API closing one of its idle keep-alive
 * connections, which it may then reuse for its next request.
 */
export function stallClients(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A 503's Retry-After in ms (RETRY_PAUSE_MS when the API could not be reached). */
function retryAfterMs(posted: { headers: Headers } | undefined): number {
  const seconds = Number(posted?.headers.get('retry-after'));
  return posted && Number.isFinite(seconds) ? seconds * 1000 : RETRY_PAUSE_MS;
}

/**
 * One execution to its terminal event, through whatever the fault does to the connection. With
 * `honourRetryAfter`, a POST answered 503 is repeated after the response's Retry-After, in one
 * wait, as HTTP clients that honour it do; otherwise after RETRY_PAUSE_MS.
 */
async function executeThrough(
  api: Api,
  agent: SeededAgent,
  run: ClientRun,
  honourRetryAfter: boolean,
): Promise<void> {
  const question = `How do I rotate the credentials? [${run.token}]`;
  const deadline = Date.now() + RETRY_FOR_MS;
  const retry = async (what: string, pauseMs = RETRY_PAUSE_MS): Promise<void> => {
    if (Date.now() > deadline) throw new Error(`${what} did not get through in ${RETRY_FOR_MS} ms`);
    await sleep(pauseMs);
  };
  for (;;) {
    const sentAt = Date.now();
    const posted = await executeAgent(api, agent, { 'Idempotency-Key': `load-${run.token}` }, question).catch(
      (err: unknown) => void run.unanswered.push(unanswered('POST', sentAt, err)),
    );
    if (posted?.status === 200) {
      run.executionId = posted.executionId;
      await collect(run, posted.events, posted.arrivals, posted.ended);
      break;
    }
    if (posted && posted.status !== 503) throw new Error(`POST answered ${posted.status}: ${posted.body}`);
    run.postRetries++;
    await retry('the POST', honourRetryAfter ? retryAfterMs(posted) : RETRY_PAUSE_MS);
  }
  while (!isTerminal(run.events.at(-1))) {
    run.reattachments++;
    const last = run.events.at(-1)?.seq as number | undefined;
    const sentAt = Date.now();
    const res = await fetch(`${api.baseUrl}/executions/${run.executionId}/stream`, {
      headers: api.headers(last === undefined ? {} : { 'last-event-id': String(last) }),
    }).catch((err: unknown) => void run.unanswered.push(unanswered('re-attach', sentAt, err)));
    if (res?.status === 200) {
      const stream = readNdjson(res);
      await collect(run, stream.events, stream.arrivals, stream.ended);
      continue;
    }
    if (res && res.status !== 503)
      throw new Error(`re-attaching answered ${res.status}: ${await res.text()}`);
    await retry('re-attaching');
  }
}

/** Adds a stream's events to the run once the stream ended or broke. */
async function collect(
  run: ClientRun,
  events: any[],
  arrivals: number[],
  ended: Promise<void>,
): Promise<void> {
  await ended.catch(() => undefined);
  run.events.push(...events);
  run.arrivals.push(...arrivals);
}

/**
 * `clients` clients run executions back to back; after `warmUpMs`, `fault` strikes (it resolves
 * when the fault is over: a process restarted, a burner exited); the clients go on for `afterMs`
 * more, then finish the executions they have in flight.
 */
export async function runUnderLoad(opts: {
  api: Api;
  agent: SeededAgent;
  clients: number;
  warmUpMs: number;
  afterMs: number;
  fault: () => Promise<FaultReport | void>;
  /** Clients wait a 503's Retry-After before repeating the POST (see `executeThrough`). */
  honourRetryAfter?: boolean;
}): Promise<LoadRun> {
  const nonce = randomBytes(3).toString('hex');
  const runs: ClientRun[] = [];
  let stopping = false;
  const client = async (c: number): Promise<void> => {
    for (let i = 0; !stopping; i++) {
      const run: ClientRun = {
        client: c,
        token: `${nonce}-c${c}-r${i}`,
        executionId: '',
        postedAt: Date.now(),
        events: [],
        arrivals: [],
        postRetries: 0,
        reattachments: 0,
        unanswered: [],
      };
      runs.push(run);
      await executeThrough(opts.api, opts.agent, run, opts.honourRetryAfter ?? false).catch((err: Error) => {
        run.error = err.message;
      });
    }
  };
  let running = true;
  const serverCloses = watchServerCloses(() => running);
  const clients = Array.from({ length: opts.clients }, (_, c) => client(c));
  await sleep(opts.warmUpMs);
  const faultAt = Date.now();
  let report: FaultReport = {};
  let faultError: unknown;
  try {
    report = (await opts.fault()) ?? {};
  } catch (err) {
    faultError = err;
  }
  const faultEndedAt = Date.now();
  await sleep(opts.afterMs);
  stopping = true;
  await Promise.all(clients);
  running = false;
  serverCloses.stop();
  if (faultError !== undefined) throw faultError;
  return { runs, faultAt, faultEndedAt, report, closedByApi: serverCloses.closed };
}

// ---- what the runs prove --------------------------------------------------------------------------

/** The model requests of each run, by the token in its question. */
function requestsByToken(fake: FakeModelServer, model: string): Map<string, RecordedRequest[]> {
  const byToken = new Map<string, RecordedRequest[]>();
  for (const request of fake.requestsFor(model)) {
    const token = /\[([0-9a-f]+-c\d+-r\d+)\]/.exec(JSON.stringify(request.body))?.[1];
    if (!token) continue;
    byToken.set(token, [...(byToken.get(token) ?? []), request]);
  }
  return byToken;
}

/**
 * From the fault to the stream's next delta (or terminal event): of the attempt that replaced one
 * the fault killed, when the stream saw a `reset` after the fault (deltas the dead attempt
 * published before it arrive after the fault too, and are no recovery).
 */
function recoveryOf(run: ClientRun, faultAt: number): number {
  const after = run.events.map((_, i) => i).filter((i) => run.arrivals[i]! > faultAt);
  const reset = after.find((i) => run.events[i].type === 'reset');
  const next = after.find((i) => (reset === undefined || i > reset) && run.events[i].type !== 'reset');
  return (next === undefined ? faultAt : run.arrivals[next]!) - faultAt;
}

/**
 * Checks what every fault must leave true, and returns the figures:
 *  - every client ended with exactly the full answer once (after a `reset` where an attempt died;
 *    with a resumable LLM, issue 27, one continuous text without `reset`);
 *  - every attempt but an execution's last ended on a heartbeat timeout (the histories);
 *  - every model request but an execution's last (the fake's log) was one the worker the fault
 *    killed (`report.killed`) was receiving, or had just received, when it died (with a resumable
 *    LLM: had created less than CREATE_WINDOW_MS before it died); any other is an extra call, the
 *    customer paying twice: model calls = executions + attempts that died after calling the model;
 *  - every answer the killed worker was receiving (cut off: `aborted` in the fake's log) was asked
 *    again, or, with a resumable LLM, its background response was resumed; without a kill, no
 *    stream saw a `reset`;
 *  - no execution is left running (record and workflow).
 */
export async function checkLoadRun(
  scenario: string,
  load: LoadRun,
  ctx: {
    fake: FakeModelServer;
    model: string;
    answer: string;
    temporalAddress: string;
    databaseUrl: string;
    /** The LLM is in resumable mode (issue 27). */
    resumable?: boolean;
  },
): Promise<LoadFigures> {
  const { runs, faultAt, report } = load;
  const failed = runs.filter((r) => r.error !== undefined);
  expect(failed.map((r) => `${r.token}: ${r.error}`)).toEqual([]);
  for (const run of runs) {
    try {
      if (ctx.resumable) expectContinuousAnswer(run.events, ctx.answer);
      else expectCleanAnswer(run.events, ctx.answer);
    } catch (err) {
      throw new Error(`execution ${run.executionId} (${run.token}): ${(err as Error).message}`);
    }
  }
  const ids = runs.map((r) => r.executionId);
  expect(new Set(ids).size).toBe(runs.length);

  const connection = await Connection.connect({ address: ctx.temporalAddress });
  const attempts = new Map<string, number>();
  try {
    const temporal = new TemporalClient({ connection });
    for (const run of runs) {
      const handle = temporal.workflow.getHandle(`execution-${run.executionId}`);
      const status = await until(
        async () => {
          const { status } = await handle.describe();
          return status.name === 'RUNNING' ? undefined : status.name;
        },
        { what: `workflow execution-${run.executionId} to close`, timeoutMs: 30_000, intervalMs: 100 },
      );
      expect({ id: run.executionId, status }).toEqual({ id: run.executionId, status: 'COMPLETED' });
      const calls = runsIn(await handle.fetchHistory(), 'callModel');
      expect(calls).toHaveLength(1);
      const last = calls[0]!;
      if (last.attempt > 1) expect(last.previousFailure).toBe('timeout:TIMEOUT_TYPE_HEARTBEAT');
      attempts.set(run.token, last.attempt);
    }
  } finally {
    await connection.close();
  }

  const db = new PgClient({ connectionString: ctx.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM executions WHERE id = ANY($1::uuid[]) GROUP BY status',
      [ids],
    );
    expect(rows).toEqual([{ status: 'succeeded', n: runs.length }]);
  } finally {
    await db.end();
  }

  const requests = requestsByToken(ctx.fake, ctx.model);
  const killed = report.killed;
  const byKilled = (r: RecordedRequest): boolean =>
    killed !== undefined &&
    killed.senders.get(r.remotePort!) === killed.pid &&
    r.receivedAt <= killed.exitedAt + DELIVERY_GRACE_MS;
  // The killed worker cut off the answers it was receiving: each such attempt must be repeated.
  const cutOff = (r: RecordedRequest): boolean => byKilled(r) && r.aborted;
  // An attempt died after calling when its answer was cut off, or complete too shortly before the
  // stop to be stored; an answer complete long before was stored, and asking again paid twice.
  const diedWith = (r: RecordedRequest): boolean =>
    ctx.resumable
      ? byKilled(r) && r.receivedAt > killed!.stoppedAt - CREATE_WINDOW_MS
      : cutOff(r) || (byKilled(r) && (r.closedAt ?? Infinity) > killed!.stoppedAt - STORING_WINDOW_MS);
  // A cut-off background response must be resumed, not asked again (issue 27).
  const resumedIds = new Set(ctx.resumable ? ctx.fake.backgroundCounts(ctx.model).resumedIds : []);
  const unexplained: string[] = [];
  const unretried: string[] = [];
  let diedAfterCalling = 0;
  let resumed = 0;
  for (const run of runs) {
    const own = requests.get(run.token) ?? [];
    expect({ token: run.token, calls: own.length >= 1 && own.length <= attempts.get(run.token)! }).toEqual({
      token: run.token,
      calls: true,
    });
    const earlier = own.slice(0, -1);
    for (const r of earlier) {
      if (diedWith(r)) diedAfterCalling++;
      else
        unexplained.push(
          `${run.token}: request at ${r.receivedAt - faultAt} ms from the fault, sent by ${killed?.senders.get(r.remotePort!) ?? 'a process not connected at the kill'}`,
        );
    }
    const last = own.at(-1);
    if (last === undefined || !cutOff(last)) continue;
    if (last.responseId !== undefined && resumedIds.has(last.responseId)) resumed++;
    else unretried.push(run.token);
  }
  expect(unexplained).toEqual([]);
  expect(unretried).toEqual([]);
  const died = [...attempts.values()].reduce((sum, a) => sum + a - 1, 0);
  if (killed) {
    expect(runs.some((r) => (requests.get(r.token) ?? []).some(cutOff))).toBe(true);
  } else {
    // An attempt may still die without a kill, before it called the model (a task the Temporal
    // server handed out as it went down); one that had called it is an extra call above.
    expect(runs.filter((r) => resets(r.events).length > 0).map((r) => r.token)).toEqual([]);
  }

  const affected = runs.filter(
    (r) => r.postedAt < faultAt && !r.events.some((e, i) => isTerminal(e) && r.arrivals[i]! <= faultAt),
  );
  const recovery = affected.map((r) => recoveryOf(r, faultAt)).sort((x, y) => x - y);
  let longestGap = 0;
  for (const run of runs) {
    for (let i = 1; i < run.arrivals.length; i++) {
      if (run.arrivals[i]! > faultAt && run.arrivals[i - 1]! <= load.faultEndedAt)
        longestGap = Math.max(longestGap, run.arrivals[i]! - run.arrivals[i - 1]!);
    }
  }
  const modelCalls = runs.reduce((sum, r) => sum + (requests.get(r.token)?.length ?? 0), 0);
  return {
    scenario,
    fault_ms: load.faultEndedAt - faultAt,
    executions: runs.length,
    affected: affected.length,
    recovery_ms: {
      p50: percentile(recovery, 50) || 0,
      p99: percentile(recovery, 99) || 0,
      max: recovery.at(-1) ?? 0,
    },
    longest_gap_ms: longestGap,
    recovery_samples_ms: recovery,
    model_calls: modelCalls,
    died_attempts: died,
    died_after_calling: diedAfterCalling,
    resumed,
    extra_model_calls: modelCalls - runs.length - diedAfterCalling,
    resets: runs.reduce((sum, r) => sum + resets(r.events).length, 0),
    reattachments: runs.reduce((sum, r) => sum + r.reattachments, 0),
    post_retries: runs.reduce((sum, r) => sum + r.postRetries, 0),
    unanswered: runs.reduce((sum, r) => sum + r.unanswered.length, 0),
    connections_closed_by_api: load.closedByApi.length,
  };
}

/**
 * Prints a scenario's figures, and appends them as one JSON line to AGENTRY_LOAD_FAULTS_RESULTS
 * when it is set (`npm run bench -- chaos` collects them from there).
 */
export function reportFigures(figures: LoadFigures): void {
  const file = process.env.AGENTRY_LOAD_FAULTS_RESULTS;
  if (file) appendFileSync(file, `${JSON.stringify({ ...figures, at: new Date().toISOString() })}\n`);
  const { recovery_samples_ms: _samples, ...shown } = figures;
  process.stdout.write(`[faults under load] ${JSON.stringify(shown)}\n`);
}
