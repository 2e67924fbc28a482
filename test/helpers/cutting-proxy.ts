// A TCP proxy in front of the API whose connections a test cuts when it wants: a client's network
// dropping mid-answer as the client sees it (an abnormal close, 1006 for a WebSocket). The server's
// side is either closed too or left open with what it writes going nowhere, as when a network
// drops silently: the server then learns of it only from its own pings.
import net from 'node:net';

export interface CuttingProxy {
  port: number;
  /** Connections accepted since the start. */
  readonly accepted: number;
  /** Cuts every open connection; `silently`: the server's side stays open. How many it cut. */
  cut(options?: { silently?: boolean }): number;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  silent: boolean;
}

export function startCuttingProxy(targetPort: number): Promise<CuttingProxy> {
  const open = new Set<Pair>();
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    const pair: Pair = { client, upstream: net.connect(targetPort, '127.0.0.1'), silent: false };
    const { upstream } = pair;
    open.add(pair);
    const drop = () => {
      open.delete(pair);
      client.destroy();
      if (!pair.silent) upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const quiet = new Set<net.Socket>();
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as net.AddressInfo).port,
        get accepted() {
          return accepted;
        },
        cut({ silently = false } = {}) {
          const pairs = [...open];
          for (const pair of pairs) {
            pair.silent = silently;
            if (silently) {
              // What the server writes is read and dropped, as a network that lost the client.
              pair.upstream.unpipe(pair.client);
              pair.upstream.on('data', () => undefined);
              quiet.add(pair.upstream);
            }
            pair.client.destroy();
          }
          return pairs.length;
        },
        close: () =>
          new Promise<void>((done) => {
            for (const { client, upstream } of open) {
              client.destroy();
              upstream.destroy();
            }
            for (const upstream of quiet) upstream.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
