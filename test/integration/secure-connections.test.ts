// Issue 14: the API and worker processes on secured connections, as on Temporal Cloud or a TLS
// cluster with managed PostgreSQL and Redis. TLS-terminating proxies made by the test stand in
// front of the local services (test/helpers/tls-proxies.ts): Temporal behind one that requires a
// client certificate of the test's CA and behind one that requires an API key, PostgreSQL with
// sslmode=verify-full, Redis over rediss://. Each wrong setting is refused at start-up with one
// line naming it, and no secret is printed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { executeAgent, expectCleanAnswer, seedAgent } from '../helpers/agent-streams';
import { createCertificateAuthority, writePemFiles } from '../helpers/certificates';
import { testEnv } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { Api } from '../helpers/http';
import { startApiProcess, startWorkerProcess, type Child } from '../helpers/processes';
import { deleteRetentionSchedule } from '../helpers/schedules';
import { REDIS_URL, TEMPORAL_ADDRESS } from '../helpers/services';
import { startGrpcTlsProxy, startTcpTlsProxy, type Proxy } from '../helpers/tls-proxies';
import { until } from '../helpers/wait';

const DAY_MS = 86_400_000;
const ANSWER = 'Rotate them every thirty days.';
const API_KEY = 'tmprl-test-key-7f3a9c1e';
const DENIED_KEY = 'tmprl-no-access-key-51d0';

let dir: string;
let files: Record<
  'ca' | 'otherCa' | 'cert' | 'key' | 'rogueCert' | 'rogueKey' | 'expiredCert' | 'expiredKey',
  string
>;
let clientKeyPem: string;
let suiteCa: Awaited<ReturnType<typeof createCertificateAuthority>>;
let mtls: Proxy;
let keyed: Proxy;
let postgres: Proxy;
let redis: Proxy;
let database: TestDatabase;
let base: Record<string, string>;
let fake: FakeModelServer;
const children: Child[] = [];
const taskQueues: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'agentry-tls-'));
  const ca = (suiteCa = await createCertificateAuthority('Agentry test CA'));
  const other = await createCertificateAuthority('Another CA');
  const server = await ca.issue({ commonName: 'localhost' });
  const client = await ca.issue({ commonName: 'agentry-worker', client: true });
  const rogue = await other.issue({ commonName: 'agentry-worker', client: true });
  const expired = await ca.issue({
    commonName: 'agentry-worker',
    client: true,
    notBefore: new Date(Date.now() - 10 * DAY_MS),
    notAfter: new Date(Date.now() - DAY_MS),
  });
  clientKeyPem = client.keyPem;
  files = writePemFiles(dir, {
    ca: ca.certPem,
    otherCa: other.certPem,
    cert: client.certPem,
    key: client.keyPem,
    rogueCert: rogue.certPem,
    rogueKey: rogue.keyPem,
    expiredCert: expired.certPem,
    expiredKey: expired.keyPem,
  });
  const redisPort = Number(new URL(REDIS_URL).port || 6379);
  database = await createTestDatabase();
  // One admin key for every process of the file: they share the database.
  base = testEnv(database.url).env;
  [mtls, keyed, postgres, redis, fake] = await Promise.all([
    startGrpcTlsProxy({ target: TEMPORAL_ADDRESS, server, clientCaPem: ca.certPem }),
    startGrpcTlsProxy({
      target: TEMPORAL_ADDRESS,
      server,
      apiKeys: { allowed: [API_KEY], denied: [DENIED_KEY] },
    }),
    startTcpTlsProxy({ targetPort: Number(new URL(database.url).port || 5432), server, postgres: true }),
    startTcpTlsProxy({ targetPort: redisPort, server }),
    startFakeModelServer(),
  ]);
});

afterAll(async () => {
  await Promise.all(children.map((c) => c.kill()));
  await Promise.all(taskQueues.map((q) => deleteRetentionSchedule(q)));
  await Promise.all([mtls?.close(), keyed?.close(), postgres?.close(), redis?.close(), fake?.close()]);
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** DATABASE_URL through the PostgreSQL TLS proxy, verified against `ca`. */
function securedDatabaseUrl(ca: string): string {
  const url = new URL(database.url);
  url.host = `localhost:${postgres.port}`;
  url.searchParams.set('sslmode', 'verify-full');
  url.searchParams.set('sslrootcert', ca);
  return url.toString();
}

const mtlsSettings = (cert = files.cert, key = files.key, ca = files.ca): Record<string, string> => ({
  TEMPORAL_ADDRESS: `localhost:${mtls.port}`,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca,
  TEMPORAL_TLS_CLIENT_CERT_PATH: cert,
  TEMPORAL_TLS_CLIENT_KEY_PATH: key,
});

const keySettings = (key: string): Record<string, string> => ({
  TEMPORAL_ADDRESS: `localhost:${keyed.port}`,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca,
  TEMPORAL_API_KEY: key,
});

/** Every setting of a test stack, then `settings` over them (not checked here: a case may be wrong). */
function envWith(settings: Record<string, string>): Record<string, string> {
  const queue = `tls-${randomBytes(4).toString('hex')}`;
  taskQueues.push(queue);
  return { ...base, AGENTRY_TASK_QUEUE: queue, ...settings };
}

async function started(child: Promise<Child>): Promise<Child> {
  const c = await child;
  children.push(c);
  return c;
}

/** The process refused to start: its output, and its last line that is not a JSON log line. */
async function refusal(child: Promise<Child>): Promise<{ output: string; last: string }> {
  const outcome = await child.then(
    (c) => {
      children.push(c);
      throw new Error(`the process started:\n${c.output.join('')}`);
    },
    (err: Error) => err.message,
  );
  expect(outcome).toMatch(/exited with 1/);
  const output = outcome.slice(outcome.indexOf('\n') + 1);
  const lines = output
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('{'));
  return { output, last: lines[lines.length - 1] ?? '' };
}

/** An API and a worker on `settings`; an agent answers through them. */
async function runAgentThrough(settings: Record<string, string>, model: string): Promise<Api> {
  const env = envWith(settings);
  const [api] = await Promise.all([started(startApiProcess(env)), started(startWorkerProcess(env))]);
  const admin = new Api(`http://127.0.0.1:${api.port}`, {
    id: env.AGENTRY_ADMIN_KEY_ID!,
    secret: env.AGENTRY_ADMIN_KEY_SECRET!,
  });
  fake.script(model, { text: ANSWER });
  const agent = await seedAgent(admin, fake, { model });
  const stream = await executeAgent(admin, agent);
  expect(stream.status).toBe(200);
  await stream.ended;
  expectCleanAnswer(stream.events, ANSWER);
  return admin;
}

describe('Temporal over mTLS, PostgreSQL with verify-full, Redis over TLS', () => {
  it('an API and a worker reach all three through TLS proxies and an agent answers; /readyz is ready', async () => {
    const before = { temporal: mtls.forwarded, postgres: postgres.forwarded, redis: redis.forwarded };
    const admin = await runAgentThrough(
      {
        ...mtlsSettings(),
        DATABASE_URL: securedDatabaseUrl(files.ca),
        REDIS_URL: `rediss://localhost:${redis.port}`,
        AGENTRY_REDIS_TLS_CA_PATH: files.ca,
      },
      'mtls-gpt',
    );
    // The traffic went through the proxies, not around them.
    expect(mtls.forwarded).toBeGreaterThan(before.temporal);
    expect(postgres.forwarded).toBeGreaterThan(before.postgres);
    expect(redis.forwarded).toBeGreaterThan(before.redis);
    const ready = await fetch(`${admin.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', redis: 'ok', temporal: 'ok' },
    });
  });

  it('a client certificate of another CA: the worker refuses to start, naming the client certificate', async () => {
    const { output, last } = await refusal(
      startWorkerProcess(envWith(mtlsSettings(files.rogueCert, files.rogueKey))),
    );
    expect(last).toMatch(/^Temporal \(localhost:\d+, namespace default, TLS with client certificate\): /);
    expect(last).toContain('TEMPORAL_TLS_CLIENT_CERT_PATH');
    expect(output).not.toContain(clientKeyPem.split('\n')[1]);
  });

  it('no client certificate where the server requires one: refused, naming the settings to set', async () => {
    const { last } = await refusal(
      startApiProcess(
        envWith({ TEMPORAL_ADDRESS: `localhost:${mtls.port}`, TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca }),
      ),
    );
    // TLS 1.3: the server's alert can arrive after the client wrote, which then sees the close.
    expect(last).toMatch(/(requires|may require) a client certificate \(TEMPORAL_TLS_CLIENT_CERT_PATH/);
  });

  it('a CA that did not sign the server certificate: refused, naming TEMPORAL_TLS_SERVER_CA_CERT_PATH', async () => {
    const { last } = await refusal(
      startWorkerProcess(envWith(mtlsSettings(files.cert, files.key, files.otherCa))),
    );
    expect(last).toContain(
      'TLS: the server certificate is not signed by a trusted CA (TEMPORAL_TLS_SERVER_CA_CERT_PATH)',
    );
  });

  it('a server name the certificate does not hold: refused, naming TEMPORAL_TLS_SERVER_NAME', async () => {
    const { last } = await refusal(
      startWorkerProcess(envWith({ ...mtlsSettings(), TEMPORAL_TLS_SERVER_NAME: 'temporal.example.com' })),
    );
    expect(last).toContain('the server certificate is not for this name (TEMPORAL_TLS_SERVER_NAME');
  });

  it('an expired certificate, a key of another certificate, an unreadable file: refused before connecting, each naming its setting', async () => {
    const expired = await refusal(
      startWorkerProcess(envWith(mtlsSettings(files.expiredCert, files.expiredKey))),
    );
    expect(expired.output).toMatch(
      /TEMPORAL_TLS_CLIENT_CERT_PATH: the certificate CN=agentry-worker expired on /,
    );
    const mismatched = await refusal(startApiProcess(envWith(mtlsSettings(files.cert, files.rogueKey))));
    expect(mismatched.output).toContain(
      'TEMPORAL_TLS_CLIENT_KEY_PATH is not the key of the certificate in TEMPORAL_TLS_CLIENT_CERT_PATH',
    );
    const missing = path.join(dir, 'absent.pem');
    const unreadable = await refusal(
      startWorkerProcess(envWith(mtlsSettings(files.cert, files.key, missing))),
    );
    expect(unreadable.output).toContain(`TEMPORAL_TLS_SERVER_CA_CERT_PATH: cannot read ${missing} (ENOENT)`);
    for (const { output } of [expired, mismatched, unreadable])
      expect(output).toMatch(/^Invalid configuration:/m);
  });

  it('PostgreSQL whose certificate is not signed by sslrootcert: refused at start, naming DATABASE_URL', async () => {
    const { last, output } = await refusal(
      startApiProcess(envWith({ DATABASE_URL: securedDatabaseUrl(files.otherCa) })),
    );
    expect(last).toMatch(/^DATABASE_URL/);
    expect(last).toContain('sslrootcert');
    expect(output).not.toContain(new URL(database.url).password || 'no-password-in-url');
  });

  it('Redis whose certificate is not signed by AGENTRY_REDIS_TLS_CA_PATH: refused at start, naming it', async () => {
    const { last } = await refusal(
      startApiProcess(
        envWith({ REDIS_URL: `rediss://localhost:${redis.port}`, AGENTRY_REDIS_TLS_CA_PATH: files.otherCa }),
      ),
    );
    expect(last).toMatch(/^REDIS_URL/);
    expect(last).toContain('AGENTRY_REDIS_TLS_CA_PATH');
  });
});

describe('Temporal with an API key', () => {
  it('an API and a worker send the key and an agent answers', async () => {
    const before = keyed.forwarded;
    await runAgentThrough(keySettings(API_KEY), 'keyed-gpt');
    expect(keyed.forwarded).toBeGreaterThan(before);
  });

  it('a key the server does not know: refused at start naming TEMPORAL_API_KEY, the key never printed', async () => {
    const wrong = 'tmprl-wrong-key-0000';
    const { last, output } = await refusal(startApiProcess(envWith(keySettings(wrong))));
    expect(last).toContain('the server refused the credentials (TEMPORAL_API_KEY)');
    expect(output).not.toContain(wrong);
  });

  it('a key without access to the namespace: refused, saying so', async () => {
    const { last, output } = await refusal(startWorkerProcess(envWith(keySettings(DENIED_KEY))));
    expect(last).toContain('the credentials are not allowed on namespace "default" (TEMPORAL_API_KEY)');
    expect(output).not.toContain(DENIED_KEY);
  });
});

describe('Temporal settings', () => {
  it('a namespace that does not exist: refused at start naming TEMPORAL_NAMESPACE', async () => {
    const { last } = await refusal(startWorkerProcess(envWith({ TEMPORAL_NAMESPACE: 'no-such-namespace' })));
    expect(last).toContain('namespace "no-such-namespace" does not exist (TEMPORAL_NAMESPACE)');
  });

  it('/readyz names Temporal and why once its connection is gone, while the database and Redis are ok; a start with nothing at the address is refused as unreachable', async () => {
    const proxy = await startGrpcTlsProxy({
      target: TEMPORAL_ADDRESS,
      server: await suiteCa.issue({ commonName: 'localhost' }),
    });
    const api = await started(
      startApiProcess(
        envWith({ TEMPORAL_ADDRESS: `localhost:${proxy.port}`, TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca }),
      ),
    );
    expect((await fetch(`http://127.0.0.1:${api.port}/readyz`)).status).toBe(200);
    await proxy.close();
    const body = await until(
      async () => {
        const res = await fetch(`http://127.0.0.1:${api.port}/readyz`);
        return res.status === 503 ? ((await res.json()) as any) : undefined;
      },
      { what: '/readyz to report Temporal unavailable', intervalMs: 200 },
    );
    expect(body.checks).toEqual({ database: 'ok', redis: 'ok', temporal: 'unavailable' });
    expect(Object.keys(body.problems)).toEqual(['temporal']);
    // A process started while nothing answers there refuses to start, saying so.
    const { last } = await refusal(
      startWorkerProcess(
        envWith({ TEMPORAL_ADDRESS: `localhost:${proxy.port}`, TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca }),
      ),
    );
    expect(last).toContain('unreachable (TEMPORAL_ADDRESS)');
    expect(body.problems.temporal).toMatch(
      /^unreachable \(TEMPORAL_ADDRESS\)$|closed the connection|no answer/,
    );
  });
});
