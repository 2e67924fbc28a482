// TLS-terminating proxies in front of the local plaintext services, so the tests check what a
// secured cluster or a managed service asks of the product (issue 14):
// - gRPC (Temporal): an HTTP/2 proxy that may require a client certificate signed by its CA, and
//   may require an API key header (`authorization: Bearer <key>`), answering as a Temporal
//   server does (UNAUTHENTICATED for an unknown key, PERMISSION_DENIED for a key without access);
// - PostgreSQL: the SSLRequest handshake, then TLS, as a managed server with sslmode=verify-full;
// - Redis: TLS from the first byte (`rediss://`).
import http2, { constants } from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';

export interface Proxy {
  port: number;
  /** Requests (gRPC) or connections (PostgreSQL, Redis) that reached the service behind. */
  forwarded: number;
  /** Requests or handshakes refused. */
  refused: number;
  close(): Promise<void>;
}

export interface ServerIdentity {
  certPem: string;
  keyPem: string;
}

export interface GrpcProxyOptions {
  /** host:port of the plaintext gRPC server. */
  target: string;
  server: ServerIdentity;
  /** Require a client certificate signed by this CA. */
  clientCaPem?: string;
  /** Require `authorization: Bearer <key>`: keys allowed, and keys that authenticate but lack access. */
  apiKeys?: { allowed: string[]; denied?: string[] };
}

const HOP_BY_HOP = new Set([':scheme', ':authority', 'connection', 'keep-alive', 'transfer-encoding']);

const grpcError = (code: number, message: string): http2.OutgoingHttpHeaders => ({
  ':status': 200,
  'content-type': 'application/grpc',
  'grpc-status': String(code),
  'grpc-message': encodeURIComponent(message),
});

export function startGrpcTlsProxy(options: GrpcProxyOptions): Promise<Proxy> {
  const upstream = http2.connect(`http://${options.target}`);
  upstream.on('error', () => undefined);
  const proxy: Proxy = { port: 0, forwarded: 0, refused: 0, close: async () => undefined };
  const server = http2.createSecureServer({
    cert: options.server.certPem,
    key: options.server.keyPem,
    ALPNProtocols: ['h2'],
    ...(options.clientCaPem ? { ca: options.clientCaPem, requestCert: true, rejectUnauthorized: true } : {}),
  });
  server.on('tlsClientError', () => proxy.refused++);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    if (options.apiKeys) {
      const key = /^Bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1];
      const refusal = !key
        ? grpcError(16, 'missing API key')
        : options.apiKeys.denied?.includes(key)
          ? grpcError(7, 'Request unauthorized.')
          : !options.apiKeys.allowed.includes(key)
            ? grpcError(16, 'invalid API key')
            : undefined;
      if (refusal) {
        proxy.refused++;
        stream.respond(refusal, { endStream: true });
        return;
      }
    }
    proxy.forwarded++;
    const forward: http2.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) forward[name] = value;
    const request = upstream.request(forward);
    let trailers: http2.IncomingHttpHeaders = {};
    request.on('response', (response) => {
      const out: http2.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(response)) if (!HOP_BY_HOP.has(name)) out[name] = value;
      // A trailers-only answer (an error) carries grpc-status in its headers and ends at once.
      if (response['grpc-status'] !== undefined) stream.respond(out, { endStream: true });
      else {
        stream.respond(out, { waitForTrailers: true });
        request.pipe(stream);
      }
    });
    request.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('wantTrailers', () => {
      const out: http2.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(trailers)) if (!name.startsWith(':')) out[name] = value;
      stream.sendTrailers(out);
    });
    stream.pipe(request);
    const cancel = (): void => {
      if (!request.closed) request.close(constants.NGHTTP2_CANCEL);
    };
    stream.on('close', cancel);
    stream.on('error', cancel);
    request.on('error', () => {
      if (!stream.closed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    });
  });
  return listen(server, proxy, async () => {
    for (const session of sessions) session.destroy();
    upstream.destroy();
    await closeServer(server);
  });
}

export interface TcpTlsProxyOptions {
  targetPort: number;
  server: ServerIdentity;
  /** PostgreSQL's SSLRequest comes before TLS; anything else is refused (TLS required). */
  postgres?: boolean;
}

/** The PostgreSQL SSLRequest: length 8, code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);

export function startTcpTlsProxy(options: TcpTlsProxyOptions): Promise<Proxy> {
  const proxy: Proxy = { port: 0, forwarded: 0, refused: 0, close: async () => undefined };
  const sockets = new Set<net.Socket>();
  const secureContext = tls.createSecureContext({ cert: options.server.certPem, key: options.server.keyPem });
  const pipeTo = (client: tls.TLSSocket): void => {
    const service = net.connect(options.targetPort, '127.0.0.1');
    sockets.add(service);
    service.on('close', () => sockets.delete(service));
    proxy.forwarded++;
    client.pipe(service).pipe(client);
    const end = (): void => {
      client.destroy();
      service.destroy();
    };
    client.on('error', end).on('close', end);
    service.on('error', end).on('close', end);
  };
  const secure = (raw: net.Socket): void => {
    const client = new tls.TLSSocket(raw, { isServer: true, secureContext });
    client.once('secure', () => pipeTo(client));
    client.on('error', () => {
      proxy.refused++;
      raw.destroy();
    });
  };
  const server = net.createServer((raw) => {
    sockets.add(raw);
    raw.on('close', () => sockets.delete(raw));
    raw.on('error', () => raw.destroy());
    if (!options.postgres) return secure(raw);
    raw.once('data', (first) => {
      if (!first.subarray(0, 8).equals(SSL_REQUEST)) {
        proxy.refused++;
        raw.destroy();
        return;
      }
      raw.write('S');
      secure(raw);
    });
  });
  return listen(server, proxy, async () => {
    for (const s of sockets) s.destroy();
    await closeServer(server);
  });
}

function listen(server: net.Server, proxy: Proxy, close: () => Promise<void>): Promise<Proxy> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      proxy.port = (server.address() as net.AddressInfo).port;
      proxy.close = close;
      resolve(proxy);
    });
  });
}

const closeServer = (server: net.Server): Promise<void> =>
  new Promise((resolve) => server.close(() => resolve()));
