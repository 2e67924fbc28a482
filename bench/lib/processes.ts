// Child processes of the benchmarks: the product's production entry points (node dist/<script>)
// with their output in a log file, started until a readiness URL answers 200 and stopped with
// SIGTERM (SIGKILL after 40 s).
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './env';

export { freeLoopbackPort as freePort } from '../../infra/temporal-metrics';

export interface Proc {
  name: string;
  child: ChildProcess;
  logFile: string;
  stop(): Promise<void>;
}

/** Ends `child` with SIGTERM and waits for it (SIGKILL after `graceMs`). */
export function stopChild(child: ChildProcess, graceMs = 40_000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts `node [nodeArgs] <root>/dist/<script>` (root: this checkout unless another is given), its output to
 * a log file, with `env` over this process's environment less the `unset` names; resolves once
 * `ready` answers 200.
 */
export async function startProcess(
  name: string,
  script: string,
  env: Record<string, string>,
  ready: string,
  stateDir: string,
  options: { root?: string; unset?: string[]; nodeArgs?: string[] } = {},
): Promise<Proc> {
  const logFile = path.join(stateDir, `${name}.log`);
  const out = openSync(logFile, 'a');
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  for (const key of options.unset ?? []) delete childEnv[key];
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), path.join(options.root ?? ROOT, 'dist', script)],
    {
      env: childEnv,
      stdio: ['ignore', out, out],
    },
  );
  const proc: Proc = { name, child, logFile, stop: () => stopChild(child) };
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}; see ${logFile}`);
    try {
      if ((await fetch(ready, { signal: AbortSignal.timeout(1000) })).ok) return proc;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await proc.stop();
  throw new Error(`${name} was not ready within 60 s; see ${logFile}`);
}
