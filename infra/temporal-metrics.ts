// Temporal's own worker metrics (task slots, poll latencies, workflow and activity counters) come
// from the SDK's Rust core, which serves them on a Prometheus endpoint of its own. We bind it to
// a private loopback port and append its text to our /metrics, so a worker has one scrape target.
import type { Logger } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (free when asked: the caller binds it soon after). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Installs the Temporal runtime with a Prometheus exporter (and `logger` for the SDK's own log
 * lines); must run before any Temporal connection.
 */
export async function installTemporalMetrics(
  options: { logger?: Logger } = {},
): Promise<() => Promise<string>> {
  const port = await freeLoopbackPort();
  Runtime.install({
    ...(options.logger ? { logger: options.logger } : {}),
    telemetryOptions: {
      metrics: { prometheus: { bindAddress: `127.0.0.1:${port}`, countersTotalSuffix: true } },
    },
  });
  return async () => {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      return res.ok ? await res.text() : '';
    } catch {
      return '';
    }
  };
}
