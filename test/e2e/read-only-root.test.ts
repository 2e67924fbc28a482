// Issue 36: the image must work with a read-only root file system, writing only under /tmp
// (Kubernetes' restricted profile; the chart mounts an emptyDir there). Without Docker, the built
// API and worker run here in a mount namespace of their own whose root file system (this
// checkout, node_modules, HOME, the working directory) is remounted read-only, with a tmpfs as
// TMPDIR the one writable place, as in the pod; they must start, ingest a document and stream an
// answer exactly, and log no error (a write refused with EROFS would say so).
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { testEnv } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { Api, answerOf, parseNdjson } from '../helpers/http';
import { documentSettled, seedPipeline } from '../helpers/knowledge';
import { startApiProcess, startWorkerProcess, type Child } from '../helpers/processes';
import { deleteRetentionSchedule } from '../helpers/schedules';

/** Runs the command with / read-only and a fresh tmpfs on $TMPDIR (root: this machine's tests run as root). */
const READ_ONLY_ROOT = [
  'unshare',
  '--mount',
  '--propagation',
  'private',
  'sh',
  '-c',
  'mount -o remount,bind,ro / && mount -t tmpfs -o size=64m tmpfs "$TMPDIR" && exec "$@"',
  'read-only-root',
];

/** JSON log lines at error level or above, and any line that mentions a refused write. */
const problems = (child: Child): string[] =>
  child.output
    .join('')
    .split('\n')
    .filter((line) => /EROFS|read-only file system/i.test(line) || /"level":(5|6)\d/.test(line));

describe('issue 36: the processes need no writable root file system, only /tmp', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'agentry-read-only-'));
  const dirs = { home: path.join(root, 'home'), tmp: path.join(root, 'tmp'), cwd: path.join(root, 'cwd') };
  let database: TestDatabase;
  let fake: FakeModelServer;
  let children: Child[] = [];
  let taskQueue = '';

  beforeAll(async () => {
    for (const dir of Object.values(dirs)) mkdirSync(dir);
    fake = await startFakeModelServer();
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(children.map((c) => c.kill()));
    if (taskQueue) await deleteRetentionSchedule(taskQueue);
    await database?.drop();
    await fake?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('the API and the worker start, ingest and stream an answer with / read-only and TMPDIR a tmpfs', async () => {
    const env = testEnv(database.url, { HOME: dirs.home, TMPDIR: dirs.tmp, PORT: '0' });
    taskQueue = env.config.taskQueue;
    const options = { wrapper: READ_ONLY_ROOT, cwd: dirs.cwd };
    const [api, worker] = await Promise.all([
      startApiProcess(env.env, options),
      startWorkerProcess(env.env, options),
    ]);
    children = [api, worker];
    const admin = new Api(`http://127.0.0.1:${api.port}`, { id: env.adminKeyId, secret: env.adminKeySecret });
    const { pipelineId } = await seedPipeline(admin, { name: 'read-only' });
    const doc = await admin.post(`/pipelines/${pipelineId}/documents`, {
      content: 'One line.\nTwo lines.',
      classification: 'public',
    });
    expect(doc.status).toBe(202);
    expect((await documentSettled(admin, pipelineId, doc.body.id, { timeoutMs: 30_000 })).status).toBe(
      'ready',
    );
    fake.script('ro-model', { text: 'Nothing written outside tmp.' });
    const llm = await admin.post('/llms', {
      name: 'ro',
      endpoint: fake.url,
      model: 'ro-model',
      api_key: 'sk-ro',
    });
    const res = await admin.post(`/llms/${llm.body.id}/query`, {
      messages: [{ role: 'user', content: 'Write?' }],
    });
    expect(res.status).toBe(200);
    expect(answerOf(parseNdjson(res.text))).toBe('Nothing written outside tmp.');
    await Promise.all(children.map((c) => c.kill('SIGTERM')));
    expect({ api: problems(api), worker: problems(worker) }).toEqual({ api: [], worker: [] });
    // The read-only directories stayed as they were (their tmpfs view is gone with the processes).
    expect(readdirSync(dirs.home)).toEqual([]);
    expect(readdirSync(dirs.cwd)).toEqual([]);
  });

  it('the namespace really is read-only outside TMPDIR (the control)', async () => {
    const { execFile } = await import('node:child_process');
    const attempt = (target: string) =>
      new Promise<string>((resolve) =>
        execFile(
          READ_ONLY_ROOT[0]!,
          [...READ_ONLY_ROOT.slice(1), 'touch', target],
          { env: { ...process.env, TMPDIR: dirs.tmp } },
          (err, _out, stderr) => resolve(err ? stderr : 'written'),
        ),
      );
    expect(await attempt(path.join(dirs.home, 'x'))).toMatch(/Read-only file system/);
    expect(await attempt(path.join(dirs.tmp, 'x'))).toBe('written');
  });
});
