// A process started while Redis is down comes up without it (Redis-backed requests answer 503,
// `/readyz` reports it) instead of hanging in start-up, and uses Redis once it answers.
import { createServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { connectRedis, isRedisOutage } from '../../infra/redis-client';
import { createLogger } from '../../infra/logger';

/** A port on which nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

it('connectRedis returns within its start wait when Redis is unreachable; commands then fail as an outage, and the warning names no URL', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const port = await closedPort();
  const started = Date.now();
  const client = await connectRedis(`redis://:hunter2@127.0.0.1:${port}`, createLogger('info', sink));
  try {
    expect(Date.now() - started).toBeLessThan(7000);
    const err = await client.ping().catch((e: unknown) => e);
    expect(isRedisOutage(err)).toBe(true);
    expect(lines.join('')).toContain('Redis is unreachable at start');
    expect(lines.join('')).not.toContain('hunter2');
  } finally {
    client.destroy();
  }
}, 15_000);
