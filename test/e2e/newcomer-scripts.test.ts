// The README's `npm run fake-llm` as a newcomer runs it: npm's own process stops on SIGINT or
// SIGTERM (as a terminal's kill, a supervisor or `docker stop` send it) and leaves no process and
// no listening port; on a fresh clone it installs the dependencies before it builds.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freeLoopbackPort } from '../../infra/temporal-metrics';
import { accepts, listeningPorts, processesOf } from '../helpers/embedded-process';
import { ROOT } from '../helpers/services';

const DEADLINE_MS = 120_000;

/** `npm run fake-llm` on a free port, once it says it listens. */
async function startFakeLlm(
  port: number,
): Promise<{ npm: ReturnType<typeof spawn>; exited: Promise<number | null> }> {
  const npm = spawn('npm', ['run', 'fake-llm'], {
    cwd: ROOT,
    // Its own process group, as in a terminal: Ctrl-C signals the whole group.
    detached: true,
    env: { ...process.env, FAKE_LLM_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not listening after ${DEADLINE_MS} ms:\n${output}`)),
      DEADLINE_MS,
    );
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.includes(`listening on http://127.0.0.1:${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    npm.stdout!.on('data', onData);
    npm.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm run fake-llm exited with ${code}:\n${output}`));
    });
  });
  return { npm, exited };
}

/** The process trees started here, ended by afterEach should a test fail before stopping them. */
const started: number[] = [];

afterEach(() => {
  for (const root of started.splice(0))
    for (const p of processesOf(root)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
});

describe('npm run fake-llm', () => {
  it.each([
    ['SIGINT', "npm's own process"],
    ['SIGTERM', "npm's own process"],
    ['SIGINT', 'the process group (Ctrl-C: npm forwards it too, so node gets it twice)'],
  ] as const)(
    'stops on %s sent to %s: no process and no port left',
    async (signal, target) => {
      const port = await freeLoopbackPort();
      const { npm, exited } = await startFakeLlm(port);
      started.push(npm.pid!);
      const tree = processesOf(npm.pid!);
      expect(tree.some((p) => /fake-llm\.js/.test(p.args))).toBe(true);
      expect(listeningPorts(tree.map((p) => p.pid))).toEqual([port]);
      process.kill(target.startsWith('the process group') ? -npm.pid! : npm.pid!, signal);
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`npm still running 20 s after ${signal}`)), 20_000);
        }),
      ]).finally(() => clearTimeout(timer));
      expect(code).toBe(0);
      const alive = tree.filter((p) => {
        try {
          process.kill(p.pid, 0);
          return true;
        } catch {
          return false;
        }
      });
      expect(alive).toEqual([]);
      expect(await accepts(port)).toBe(false);
    },
    DEADLINE_MS + 30_000,
  );

  it('on a fresh clone (no node_modules) installs the dependencies before it builds', () => {
    // The script and ensure-deps.sh in a checkout without node_modules, with npm and npx that
    // only note how they were called (npx fails like a tsc that is not installed).
    const clone = mkdtempSync(path.join(tmpdir(), 'agentry-fresh-clone-'));
    try {
      mkdirSync(path.join(clone, 'scripts'));
      mkdirSync(path.join(clone, 'bin'));
      for (const file of ['scripts/fake-llm.sh', 'scripts/ensure-deps.sh', 'package-lock.json'])
        copyFileSync(path.join(ROOT, file), path.join(clone, file));
      const calls = path.join(clone, 'calls.log');
      for (const [tool, code] of [
        ['npm', 0],
        ['npx', 1],
      ] as const) {
        writeFileSync(
          path.join(clone, 'bin', tool),
          `#!/bin/sh\necho "${tool} $*" >> "${calls}"\nexit ${code}\n`,
        );
        chmodSync(path.join(clone, 'bin', tool), 0o755);
      }
      let status = 0;
      try {
        execFileSync('bash', [path.join(clone, 'scripts/fake-llm.sh')], {
          env: { ...process.env, PATH: `${path.join(clone, 'bin')}:${process.env.PATH}` },
          stdio: 'pipe',
        });
      } catch (err) {
        status = (err as { status: number }).status;
      }
      expect(status).toBe(1);
      expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
        'npm ci --no-audit --no-fund --loglevel=error',
        'npx tsc -p tsconfig.build.json',
      ]);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });
});
