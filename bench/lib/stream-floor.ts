// The streams benchmark's floor column (issue 35, DESIGN §6): the bare Temporal design of a
// streamed chat, built from the SDK alone (bench/lib/stream-floor-*.ts), on its own task queue,
// the benchmark's dev server, redis-server and paced model. Production: its API and its worker as
// two processes, pub/sub on Redis; embedded: one process, an EventEmitter, eager start.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { askNdjson, type Received } from './stream-clients';
import type { FloorRole } from './stream-floor-process';
import { ROOT, log } from './env';
import { bundleFloorWorkflow } from './stream-floor-worker';
import { stopChild } from './processes';

export interface StreamFloor {
  kind: 'production' | 'embedded';
  /** The processes whose CPU is the floor's (the names Agentry's column uses). */
  processes: Record<string, number | undefined>;
  /** One answer of `model` to `q`, as the client of Agentry's column reads it. */
  ask(model: string, q: string, timeoutMs: number): Promise<Received>;
  stop(): Promise<void>;
}

function startRole(
  role: FloorRole,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(__dirname, 'stream-floor-process.js'), [role], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the floor's ${role} exited with ${code} at start`)));
    child.once('message', (m: { ready?: string }) => resolve({ child, url: m.ready ?? '' }));
  });
}

export async function startStreamFloor(
  kind: 'production' | 'embedded',
  modelUrl: string,
  redisUrl?: string,
): Promise<StreamFloor> {
  const suffix = randomBytes(4).toString('hex');
  const dir = path.join(ROOT, 'bench', '.state', `stream-floor-${kind}-${suffix}`);
  mkdirSync(dir, { recursive: true });
  const bundle = path.join(dir, 'workflow-bundle.js');
  await bundleFloorWorkflow(bundle);
  const env = {
    FLOOR_TASK_QUEUE: `bench-stream-floor-${kind}-${suffix}`,
    FLOOR_WORKFLOW_BUNDLE: bundle,
    FLOOR_MODEL_URL: modelUrl,
    ...(redisUrl ? { FLOOR_REDIS_URL: redisUrl } : {}),
  };
  const roles: FloorRole[] = kind === 'production' ? ['api', 'worker'] : ['embedded'];
  const settled = await Promise.allSettled(roles.map((role) => startRole(role, env)));
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = () => Promise.all(started.map((s) => stopChild(s.child, 10_000))).then(() => undefined);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const processes = Object.fromEntries(roles.map((role, i) => [role, started[i]!.child.pid]));
  const url = started[0]!.url;
  log(`floor (${kind}): ${roles.map((r) => `${r} pid ${processes[r]}`).join(', ')} on ${url}`);
  return {
    kind,
    processes,
    ask: (model, q, timeoutMs) => askNdjson(`${url}/chat`, {}, { model, question: q }, timeoutMs),
    stop,
  };
}
