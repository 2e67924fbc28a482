// Bad-input fuzzing (SPEC §1, §18): every route of /openapi.json (so routes added later are covered
// without editing this file) receives fast-check-generated requests: schema-derived bodies and
// their mutations, random JSON, text that is not JSON, wrong content types and encodings, path ids
// that exist, are absent or are malformed, list query strings, execution headers, and wrong
// credentials. Every answer must be < 500 with x-request-id; every error must carry its family's
// shape; a rejected request must leave every table unchanged and call no model; and a 2xx must
// never follow a body that fails the route's documented schema.
//
// Deterministic by default: FUZZ_SEED (printed) changes the seed, FUZZ_ROUTE ("POST /llms") keeps
// the routes whose "METHOD path" contains it, FUZZ_REQUESTS the number of generated requests.
import fc from 'fast-check';
import type { Knex } from 'knex';
import { createHash } from 'node:crypto';
import { createKnex } from '../../db/knex';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import {
  databaseProbe,
  settle,
  snapshotDiff,
  type DatabaseProbe,
  type Snapshot,
} from '../helpers/db-snapshot';
import { errorProblems, schemaAccepts, streamFailure, type Answer } from '../helpers/fuzz-checks';
import { createFixtures, discoverObjects, routesOf } from '../helpers/fuzz-fixtures';
import {
  describeRequest,
  requestArb,
  routeKey,
  toFetch,
  type Credentials,
  type FuzzContext,
  type FuzzRequest,
  type FuzzRoute,
} from '../helpers/fuzz-requests';
import { startStack, type Stack } from '../helpers/stack';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20_240_611;
const TARGET = process.env.FUZZ_REQUESTS ? Number(process.env.FUZZ_REQUESTS) : 2400;
const ONLY = process.env.FUZZ_ROUTE;
const VERBOSE = process.env.FUZZ_VERBOSE === '1';
const REQUEST_TIMEOUT_MS = 20_000;
const SHRINK_BUDGET_MS = 30_000;
/** Past half of it failures are not shrunk; past all of it the remaining routes are reported unrun. */
const RUN_BUDGET_MS = 240_000;

let stack: Stack;
let fake: FakeModelServer;
let probe: DatabaseProbe;
let probeDb: Knex;
let ctx: FuzzContext;
let routes: FuzzRoute[];
let limited: { id: string; secret: string };

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  // Its own connection: fingerprints never wait for (or hold up) the server's small pool.
  probeDb = createKnex(stack.database.url, 1);
  probe = await databaseProbe(probeDb);
  ctx = {
    pools: new Map(),
    existing: new Set(),
    schema: { uuids: [], url: fake.url },
    seedBodies: new Map(),
    headerIds: { pipeline: [], llm: [] },
  };
  const fixtures = await createFixtures({ stack, fake, probe, ctx });
  limited = fixtures.limited;
  ctx.seedBodies = fixtures.seeds;
  const doc = await stack.api.as(undefined).get('/openapi.json');
  routes = routesOf(doc.body);
  await discoverObjects({ stack, fake, probe, ctx }, routes, SEED);
}, 120_000);

afterAll(async () => {
  await probeDb?.destroy();
  await stack?.stop();
  await fake?.close();
});

function authHeaders(credentials: Credentials, bearer: boolean): Record<string, string> {
  const admin = { id: stack.env.adminKeyId, secret: stack.env.adminKeySecret };
  const pair = {
    admin: [admin.id, admin.secret],
    limited: [limited.id, limited.secret],
    'wrong-secret': [admin.id, 'wrong-secret'],
    none: undefined,
    'malformed-id': ['not-a-key-id', admin.secret],
    'unknown-id': ['01890a5d-ac96-774b-bcce-b302099a8058', admin.secret],
  }[credentials];
  if (!pair) return {};
  return bearer
    ? { authorization: `Bearer ${pair[0]}.${pair[1]}` }
    : { 'x-api-key': pair[0]!, 'x-api-key-secret': pair[1]! };
}

async function send(route: FuzzRoute, req: FuzzRequest): Promise<Answer> {
  const { headers, body } = toFetch(req, authHeaders(req.credentials, route.bearer ?? false));
  const res = await fetch(`${stack.url}${req.url}`, {
    method: req.method,
    headers,
    ...(body ? { body } : {}),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The server's log lines of a request at error level, with their stacks (for 5xx reports). */
function serverErrors(requestId: string | null): string {
  if (!requestId) return '';
  const lines = stack.logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((l) => l.includes(requestId))
    .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { stack?: string; message?: string } })
    .filter((l) => l.level >= 50);
  return lines.map((l) => `\n    server log: ${l.msg}: ${l.err?.stack ?? l.err?.message ?? ''}`).join('');
}

const stats = {
  sent: 0,
  accepted: 0,
  rejectedWrites: 0,
  statuses: new Map<number, number>(),
  byRoute: new Map<string, Map<number, number>>(),
};
const statusList = (counts: Map<number, number> | undefined): string =>
  [...(counts ?? new Map<number, number>()).entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');
let atRest: Snapshot | undefined;

/** One request and every check on its answer; throws a description of every broken rule. */
async function exercise(route: FuzzRoute, req: FuzzRequest): Promise<void> {
  const write = req.method !== 'GET';
  const before = write ? (atRest ?? (await settle(probe))) : undefined;
  // Only a verified unchanged database is at rest again (a failure below leaves it unknown).
  atRest = write ? undefined : atRest;
  const modelCalls = fake.requests.length;
  let answer: Answer;
  try {
    answer = await send(route, req);
  } catch (err) {
    atRest = undefined;
    throw new Error(
      `no answer: ${(err as Error).message} ${String((err as { cause?: unknown }).cause ?? '')}`,
    );
  }
  stats.sent++;
  stats.statuses.set(answer.status, (stats.statuses.get(answer.status) ?? 0) + 1);
  const mine = stats.byRoute.get(routeKey(route)) ?? new Map<number, number>();
  stats.byRoute.set(routeKey(route), mine.set(answer.status, (mine.get(answer.status) ?? 0) + 1));
  const problems: string[] = [];
  const requestId = answer.headers.get('x-request-id');
  if (answer.status >= 500) problems.push(`server error ${answer.status}`);
  if (!requestId) problems.push('no x-request-id');
  const anonymous = req.credentials !== 'admin' && req.credentials !== 'limited';
  if (route.auth && anonymous && answer.status !== 401 && answer.status !== 429)
    problems.push(`credentials "${req.credentials}" were not refused with 401/429`);

  if (answer.status < 400) {
    stats.accepted++;
    if (route.body && schemaAccepts(route, req) === false)
      problems.push('a body that fails the documented request schema was accepted');
    const streamed = streamFailure(answer);
    if (streamed) problems.push(streamed);
  } else {
    problems.push(...errorProblems(route, answer));
    if (fake.requests.length !== modelCalls) problems.push('a rejected request called the model');
    if (write) {
      stats.rejectedWrites++;
      const after = await probe.snapshot();
      const changed = snapshotDiff(before!, after);
      if (changed.length === 0) atRest = after;
      else problems.push(`a rejected write changed the database: ${changed.join(', ')}`);
    }
  }
  if (problems.length > 0)
    throw new Error(
      `${problems.join('; ')}\n    → ${answer.status} ${answer.text.slice(0, 600)}${serverErrors(requestId)}`,
    );
}

/** Routes with more input to vary get more requests. */
const weightOf = (r: FuzzRoute): number =>
  1 +
  (r.body ? 4 : 0) +
  (r.listFields ? 2 : 0) +
  (r.path.match(/\{/g)?.length ?? 0) +
  (r.method === 'GET' ? 0 : 1);

const seedOf = (route: FuzzRoute): number =>
  createHash('sha256')
    .update(`${SEED}:${routeKey(route)}`)
    .digest()
    .readInt32LE(0);

/** fast-check over one route; the failure report names the seed and the shrunk request. */
async function fuzzRoute(
  route: FuzzRoute,
  numRuns: number,
  shrink: boolean,
): Promise<{ runs: number; failure?: string }> {
  const seed = seedOf(route);
  const routeStarted = Date.now();
  const sentBefore = stats.sent;
  const details = await fc.check(
    fc.asyncProperty(requestArb(route, ctx), (req) => exercise(route, req)),
    // Shrinking stops after a while (or at once when the run is late) and reports the smallest
    // request found so far.
    {
      seed,
      numRuns,
      endOnFailure: !shrink,
      interruptAfterTimeLimit: SHRINK_BUDGET_MS,
      markInterruptAsFailure: false,
    },
  );
  if (VERBOSE)
    console.log(
      `fuzz: ${routeKey(route)}: ${stats.sent - sentBefore} requests in ${Date.now() - routeStarted} ms` +
        `${details.failed ? ' FAILED' : ''}; ${statusList(stats.byRoute.get(routeKey(route)))}`,
    );
  const runs = Math.min(details.numRuns, numRuns);
  if (!details.failed) return { runs };
  const req = details.counterexample?.[0];
  const error =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return {
    runs,
    failure:
      `${routeKey(route)} (FUZZ_SEED=${SEED} FUZZ_ROUTE='${routeKey(route)}'; seed ${seed}, ` +
      `path ${details.counterexamplePath}, ${details.numShrinks} shrinks)\n` +
      `    ${req ? describeRequest(req) : '(no counterexample)'}\n    ${error}`,
  };
}

describe('bad-input fuzzing of every endpoint', () => {
  it('§1: the database fingerprint notices a one-field update and ignores reads', async () => {
    const before = await settle(probe);
    expect(await probe.snapshot()).toEqual(before);
    const llmId = ctx.pools.get('llms')![0]!;
    expect((await stack.api.get(`/llms/${llmId}`)).status).toBe(200);
    expect(snapshotDiff(before, await probe.snapshot())).toEqual([]);
    expect((await stack.api.patch(`/llms/${llmId}`, { description: 'fingerprint' })).status).toBe(200);
    expect(snapshotDiff(before, await probe.snapshot())).toEqual(['llms (rows 1 → 1)']);
    atRest = undefined;
  });

  it(
    '§1/§18: generated bad input on every route → 4xx with the error shape, never 5xx; rejected writes change nothing',
    async () => {
      const started = Date.now();
      const total = routes.reduce((n, r) => n + weightOf(r), 0);
      const selected = routes.filter((r) => !ONLY || routeKey(r).includes(ONLY));
      expect(selected.length).toBeGreaterThan(0);
      console.log(`fuzz: seed ${SEED} (set FUZZ_SEED to change), ${selected.length} routes`);
      const failures: string[] = [];
      let generated = 0;
      for (const [i, route] of selected.entries()) {
        const elapsed = Date.now() - started;
        if (elapsed > RUN_BUDGET_MS) {
          failures.push(
            `Out of time after ${elapsed} ms; not fuzzed: ${selected.slice(i).map(routeKey).join(', ')}`,
          );
          break;
        }
        const numRuns = Math.max(8, Math.round((TARGET * weightOf(route)) / total));
        const { runs, failure } = await fuzzRoute(route, numRuns, elapsed < RUN_BUDGET_MS / 2);
        generated += runs;
        if (failure) failures.push(failure);
      }
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      console.log(
        `fuzz: ${generated} generated requests (${stats.sent} sent with shrinking), ${stats.accepted} accepted, ` +
          `${stats.rejectedWrites} rejected writes checked against the database, in ${seconds} s; ` +
          `statuses ${statusList(stats.statuses)}`,
      );
      if (failures.length > 0)
        throw new Error(`${failures.length} route(s) broke a rule:\n\n${failures.join('\n\n')}`);
      if (!ONLY && !process.env.FUZZ_REQUESTS) expect(generated).toBeGreaterThanOrEqual(2000);
      // The generators reach past authentication and validation, not only one status.
      if (!ONLY)
        for (const status of [200, 400, 401, 403, 404])
          expect({ status, seen: stats.statuses.has(status) }).toEqual({ status, seen: true });
      expect(stats.rejectedWrites).toBeGreaterThan(0);
    },
    RUN_BUDGET_MS + 60_000,
  );
});
