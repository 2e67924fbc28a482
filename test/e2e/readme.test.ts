// README.md's walk-through, block by block, against separate API and worker processes on the real
// services (PostgreSQL, the Redis relay, Temporal) and the fake model server: every curl answers
// the status its `# → NNN` comment names, and the answers show what the README says they show.
// test/e2e/quick-start.test.ts runs the same blocks against `npm start`'s process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import {
  expectWalkthroughAnswers,
  readmeWalkthrough,
  readWalkthrough,
  runWalkthrough,
} from '../helpers/readme-walkthrough';
import { ROOT } from '../helpers/services';

let stack: ProcessStack;
let fake: FakeModelServer;
let cwd: string;

beforeAll(async () => {
  cwd = mkdtempSync(path.join(tmpdir(), 'agentry-readme-cwd-'));
  fake = await startFakeModelServer({ defaults: { deltaDelayMs: 2 } });
  stack = await startProcessStack();
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
  rmSync(cwd, { recursive: true, force: true });
});

const target = () => ({
  cwd,
  deadlineMs: 120_000,
  exports: {
    AGENTRY: `http://127.0.0.1:${stack.api.port}`,
    FAKE_LLM: fake.url,
    KEY: stack.env.adminKeyId,
    SECRET: stack.env.adminKeySecret,
  },
});

describe('README.md walk-through', () => {
  it('every block exits 0 and every curl answers the status its comment names', async () => {
    const blocks = readmeWalkthrough(ROOT);
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    const result = await runWalkthrough(blocks, target());
    expectWalkthroughAnswers(result);
    // Each annotated command ran: the seed 000 agent, its dry run, three executions, the trace…
    const annotated = blocks.reduce((n, b) => n + b.expected.size, 0);
    expect(result.requests).toBeGreaterThanOrEqual(annotated);
  }, 180_000);

  it('a broken command fails the run, naming its README line', async () => {
    // The runner itself: a wrong path answers 401 (no key) where the README promises 200, a
    // failing command stops the session, and an unannotated curl is reported.
    const markdown = [
      '<!-- walkthrough:start -->',
      '```bash',
      'export AGENTRY=http://127.0.0.1:1',
      'curl -sS "$AGENTRY/healthz"   # → 200',
      'curl -sS "$AGENTRY/no-such-route"   # → 200',
      'curl -sS "$AGENTRY/healthz"',
      '```',
      '```bash',
      'false',
      '```',
      '```bash',
      'curl -sS "$AGENTRY/healthz"   # → 200',
      '```',
      '<!-- walkthrough:end -->',
    ].join('\n');
    const result = await runWalkthrough(readWalkthrough(markdown), {
      ...target(),
      exports: { AGENTRY: `http://127.0.0.1:${stack.api.port}` },
    });
    expect(result.failures).toEqual([
      'the block at README.md line 9 exited with status 1',
      'README.md line 5: expected HTTP 200, got 401',
      "README.md line 6: a curl command without a '# → <status>' comment",
    ]);
    expect(result.requests).toBe(3);
  });
});
