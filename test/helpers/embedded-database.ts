// The embedded quick start's database for tests: PGlite with pgvector in memory, served over the
// Postgres wire protocol as embedded.ts serves it, as a TestDatabase that startStack can use and
// drop. PGlite runs in a child Node process: it loads its WebAssembly with a dynamic import,
// which Jest's module sandbox refuses.
import { spawn } from 'node:child_process';
import type { TestDatabase } from './database';
import { ROOT } from './services';

/** Settings that go with it: no Redis (in-process relay, traces and caches), one connection. */
export const EMBEDDED_ENV = { REDIS_URL: '', AGENTRY_DB_POOL_MAX: '1' };

const SERVER = `
const { PGlite } = require('@electric-sql/pglite');
const { vector } = require('@electric-sql/pglite-pgvector');
const { PGLiteSocketServer } = require('@electric-sql/pglite-socket');
(async () => {
  const db = await PGlite.create({ extensions: { vector } });
  const socket = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 });
  await socket.start();
  process.stdout.write('listening ' + socket.getServerConn() + '\\n');
  const stop = () => socket.stop().then(() => db.close()).then(() => process.exit(0));
  process.on('SIGTERM', stop);
  // Gone with the test process, however that ends: its stdin closes.
  process.stdin.on('close', stop).resume();
})().catch((err) => { console.error(err); process.exit(1); });
`;

export function startEmbeddedDatabase(timeoutMs = 30_000): Promise<TestDatabase> {
  const child = spawn(process.execPath, ['-e', SERVER], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`PGlite did not start:\n${output.join('')}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`PGlite exited (${code}):\n${output.join('')}`));
    });
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    child.stdout.on('data', (chunk: Buffer) => {
      output.push(chunk.toString('utf8'));
      const address = /listening (\S+)/.exec(output.join(''))?.[1];
      if (!address) return;
      clearTimeout(timer);
      resolve({
        name: 'pglite',
        url: `postgres://postgres@${address}/postgres`,
        async drop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}
