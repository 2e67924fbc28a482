// The quick start as a newcomer runs it: `npm start` on a fresh state directory, with its own
// PGlite, in-process relay and caches and its own Temporal dev server. The first start prints the
// admin key once, and where it keeps it; README.md's walk-through runs against it as written (the
// key read from .agentry/secrets.json); SIGTERM (a supervisor's, `docker stop`'s) and SIGINT sent
// to npm's own process, and Ctrl-C to its process group, leave no process and no listening port
// of it; the second start reuses the state and prints no key. test/e2e/readme.test.ts runs the
// same walk-through on the production-shaped processes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { KeyRing } from '../../infra/crypto';
import { freeLoopbackPort } from '../../infra/temporal-metrics';
import {
  accepts,
  listeningPorts,
  processesOf,
  startEmbedded,
  type Embedded,
} from '../helpers/embedded-process';
import { Api } from '../helpers/http';
import { expectWalkthroughAnswers, readmeWalkthrough, runWalkthrough } from '../helpers/readme-walkthrough';
import { ROOT } from '../helpers/services';

const START_DEADLINE_MS = 150_000;
const STOP_DEADLINE_MS = 60_000;

let home: string;
let stateDir: string;
let port: number;
let fake: FakeModelServer;
let running: Embedded | undefined;

beforeAll(async () => {
  // The checkout of the README: `.agentry/` in the directory the commands run in.
  home = mkdtempSync(path.join(tmpdir(), 'agentry-quick-start-'));
  stateDir = path.join(home, '.agentry');
  port = await freeLoopbackPort();
  fake = await startFakeModelServer({ defaults: { deltaDelayMs: 2 } });
});

afterAll(async () => {
  if (running && running.process.exitCode === null) {
    running.process.kill('SIGINT');
    await running.exited;
  }
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

const secrets = () =>
  JSON.parse(readFileSync(path.join(stateDir, 'secrets.json'), 'utf8')) as {
    applicationSecret: string;
    adminKeyId: string;
    adminKeySecret: string;
  };

/**
 * `signal` to npm's process (or, as Ctrl-C does, to its whole process group), then: exit code 0,
 * none of its processes left, none of its ports accepting.
 */
async function stopAndExpectNothingLeft(
  embedded: Embedded,
  signal: NodeJS.Signals,
  to: 'npm' | 'group' = 'npm',
): Promise<void> {
  const before = processesOf(embedded.process.pid!, stateDir);
  // The Temporal dev server is one of them, detached from embedded.js.
  expect(before.some((p) => p.pid !== embedded.process.pid && /server start-dev/.test(p.args))).toBe(true);
  const ports = listeningPorts(before.map((p) => p.pid));
  // The API, the PGlite socket (in-process) and Temporal's frontend and UI at least.
  expect(ports).toContain(port);
  expect(ports.length).toBeGreaterThanOrEqual(4);

  process.kill(to === 'group' ? -embedded.process.pid! : embedded.process.pid!, signal);
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    embedded.exited,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`still running ${STOP_DEADLINE_MS} ms after ${signal}`)),
        STOP_DEADLINE_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  expect(code).toBe(0);
  expect(embedded.output()).toContain('Stopping Agentry...');
  const left = processesOf(embedded.process.pid!, stateDir).filter((p) =>
    before.some((b) => b.pid === p.pid),
  );
  expect(left).toEqual([]);
  expect(processesOf(-1, stateDir)).toEqual([]);
  const open: number[] = [];
  for (const p of ports) if (await accepts(p)) open.push(p);
  expect(open).toEqual([]);
}

describe('the quick start (npm start)', () => {
  it(
    'the first start on a fresh state directory prints the admin key once',
    async () => {
      running = await startEmbedded(stateDir, port, START_DEADLINE_MS);
      const output = running.output();
      expect(output).toContain(`Agentry is running on http://127.0.0.1:${port}`);
      expect(output).toContain(`embedded PGlite in ${stateDir}; relay: in-process`);
      const { adminKeyId, adminKeySecret } = secrets();
      expect(output.match(/x-api-key: /g)).toHaveLength(1);
      expect(output).toContain(`  x-api-key: ${adminKeyId}\n  x-api-key-secret: ${adminKeySecret}`);
      expect(output.split(adminKeySecret)).toHaveLength(2);
      // Where it really is (AGENTRY_STATE_DIR), not the default .agentry/.
      expect(output).toContain(`Admin API key (shown once; stored in ${stateDir}/secrets.json):`);
    },
    START_DEADLINE_MS + 10_000,
  );

  it(
    'DX-6: its Temporal UI decodes through the capability URL, which the output never shows',
    async () => {
      const output = running!.output();
      const uiUrl = /^Temporal UI: (http:\S+)$/m.exec(output)![1]!;
      const { applicationSecret } = secrets();
      const capability = new KeyRing(applicationSecret).codecCapability();
      // The UI's own settings, as the browser loads them.
      const settings = (await (await fetch(`${uiUrl}/api/v1/settings`)).json()) as {
        Codec: { Endpoint: string };
      };
      expect(settings.Codec.Endpoint).toBe(`http://127.0.0.1:${port}/temporal-codec/${capability}`);
      expect(output).not.toContain(capability);
      const res = await fetch(`${settings.Codec.Endpoint}/decode`, {
        method: 'POST',
        headers: { origin: uiUrl, 'content-type': 'application/json', 'x-namespace': 'default' },
        body: JSON.stringify({ payloads: [] }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(uiUrl);
    },
    START_DEADLINE_MS + 10_000,
  );

  it("README.md's walk-through runs against it as written", async () => {
    const result = await runWalkthrough(readmeWalkthrough(ROOT), {
      cwd: home,
      deadlineMs: 180_000,
      // The key comes from .agentry/secrets.json, as the README reads it.
      exports: { AGENTRY: `http://127.0.0.1:${port}`, FAKE_LLM: fake.url },
    });
    expectWalkthroughAnswers(result);
  }, 200_000);

  it(
    "SIGTERM to npm's process stops everything it started: the Temporal dev server, the PGlite socket, the API",
    async () => {
      await stopAndExpectNothingLeft(running!, 'SIGTERM');
    },
    STOP_DEADLINE_MS + 10_000,
  );

  it(
    "the second start reuses the state (no key printed, the walk-through's agent still there); SIGINT to npm stops it",
    async () => {
      running = await startEmbedded(stateDir, port, START_DEADLINE_MS);
      const output = running.output();
      const { adminKeyId, adminKeySecret } = secrets();
      expect(output).toContain(`Agentry is running on http://127.0.0.1:${port}`);
      expect(output).not.toContain('x-api-key');
      expect(output).not.toContain(adminKeySecret);
      const admin = new Api(`http://127.0.0.1:${port}`, { id: adminKeyId, secret: adminKeySecret });
      const agents = await admin.get('/agents?name=support-answers');
      expect(agents.status).toBe(200);
      expect(agents.body.data).toHaveLength(1);
      await stopAndExpectNothingLeft(running, 'SIGINT');
    },
    START_DEADLINE_MS + STOP_DEADLINE_MS + 10_000,
  );

  it(
    "Ctrl-C (SIGINT to npm's process group: node gets it from the terminal and from npm) stops everything",
    async () => {
      running = await startEmbedded(stateDir, port, START_DEADLINE_MS);
      await stopAndExpectNothingLeft(running, 'SIGINT', 'group');
    },
    START_DEADLINE_MS + STOP_DEADLINE_MS + 10_000,
  );
});
