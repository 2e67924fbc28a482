// A TCP proxy in front of PostgreSQL that counts the statements its clients send: every simple
// Query ('Q') and every Execute ('E') of the extended protocol, which is what PostgreSQL runs
// (BEGIN and COMMIT count, as the server's statement log would show them). Bytes pass through
// unchanged; only the client's side is read, as length-prefixed messages after the untyped
// start-up one (an SSLRequest or GSSENCRequest is followed by another; a TLS session after it
// could not be read, and the benchmarks' local server is reached without one). Used by the
// execution benchmark's statements phase only, so that no measured phase pays the extra hop.
import net from 'node:net';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** The client → server side of one connection, read message by message across chunks. */
class MessageCounter {
  statements = 0;
  private header = Buffer.alloc(0);
  private skip = 0;
  private startup = true;

  feed(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      // Start-up: length (4) and code (4); afterwards: type (1) and length (4, itself included).
      const size = this.startup ? 8 : 5;
      const take = Math.min(size - this.header.length, chunk.length - i);
      this.header = Buffer.concat([this.header, chunk.subarray(i, i + take)]);
      i += take;
      if (this.header.length < size) return;
      if (this.startup) {
        const code = this.header.readInt32BE(4);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.startup = false;
        this.skip = this.header.readInt32BE(0) - 8;
      } else {
        const type = this.header[0];
        if (type === 0x51 /* Q */ || type === 0x45 /* E */) this.statements += 1;
        this.skip = this.header.readInt32BE(1) - 4;
      }
      this.header = Buffer.alloc(0);
    }
  }
}

export interface StatementProxy {
  /** host:port to give clients instead of the server's. */
  address: string;
  /** Statements sent through the proxy so far (closed connections included). */
  statements(): number;
  close(): Promise<void>;
}

export async function startStatementProxy(host: string, port: number): Promise<StatementProxy> {
  const counters = new Set<MessageCounter>();
  let closed = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const counter = new MessageCounter();
    counters.add(counter);
    const upstream = net.connect(port, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (chunk: Buffer) => counter.feed(chunk));
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => {
      closed += counter.statements;
      counters.delete(counter);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${address.port}`,
    statements: () => [...counters].reduce((sum, c) => sum + c.statements, closed),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
