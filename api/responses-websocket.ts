// The WebSocket mode of /v1/responses (SPEC OR-5), on the API's own port. An upgrade of
// `GET /v1/responses` goes through the app as any request does, so it is authenticated exactly as
// HTTP /v1 is (a Bearer key or the x-api-key headers, AUTH-6's counting, the request id) and its
// refusal (401, 429, 503, a bad query's 400) is the error handler's answer in OpenAI's shape,
// written on the socket before any upgrade; only this router's route upgrades it, with the key
// fixed for the connection. Other upgrades are answered at once: 404 for another path, 400 for
// another protocol.
import type { Express, Request } from 'express';
import { Router } from 'express';
import { ServerResponse, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { InvalidInput, Unavailable } from '../domain/errors';
import type { AgentExecutionDeps } from './agent-execution-start';
import { principalOf } from './auth';
import { webSocketError } from './openai-errors';
import { ResponsesSocket, type ResumeRequest, type SocketSettings } from './responses-socket';

export interface WebSocketDeps extends AgentExecutionDeps {
  /** The largest message: a create's body limit (`AGENTRY_DOCUMENT_BODY_LIMIT_BYTES`). */
  documentBodyLimitBytes: number;
  webSocket: SocketSettings;
}

/** Sockets still open this long after a shutdown's 1001 are cut. */
const SHUTDOWN_CLOSE_MS = 2000;
const PATH = '/v1/responses';

/** An answer on a socket that will not be upgraded, and its end. */
function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: webSocketError(status, message).error });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A reconnect's query; a 400 naming what is wrong. */
function resumeOf(query: Request['query']): ResumeRequest | undefined {
  const { response_id: id, starting_after: after } = query;
  if (id !== undefined && (typeof id !== 'string' || id === ''))
    throw new InvalidInput('response_id must be one response id');
  if (after !== undefined && (typeof after !== 'string' || !/^\d{1,15}$/.test(after)))
    throw new InvalidInput('starting_after must be a non-negative integer (a sequence_number)');
  if (id === undefined) {
    if (after !== undefined)
      throw new InvalidInput('starting_after resumes a response: give its response_id');
    return undefined;
  }
  return { responseId: id, ...(after !== undefined ? { startingAfter: Number(after) } : {}) };
}

export class ResponsesWebSockets {
  readonly router = Router();
  private readonly server: WebSocketServer;
  private readonly upgrades = new WeakMap<IncomingMessage, { socket: Socket; head: Buffer }>();
  private readonly open = new Set<ResponsesSocket>();
  private closing = false;

  constructor(private readonly deps: WebSocketDeps) {
    this.server = new WebSocketServer({
      noServer: true,
      maxPayload: deps.documentBodyLimitBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.server.on('headers', (headers, req) => headers.push(`x-request-id: ${(req as Request).requestId}`));
    // Any other GET /v1/responses goes on to the 404 it always was.
    this.router.get(PATH, (req, res, next) => {
      const upgrade = this.upgrades.get(req);
      if (!upgrade) return next();
      const principal = principalOf(req);
      const resume = resumeOf(req.query);
      if (this.closing) throw new Unavailable('The API is shutting down: connect again');
      res.detachSocket(upgrade.socket);
      this.server.handleUpgrade(req, upgrade.socket, upgrade.head, (ws) => {
        const opened = Date.now();
        const log = req.log.child({ websocket: true });
        const socket = new ResponsesSocket(deps, ws, principal, log, deps.webSocket, resume);
        this.open.add(socket);
        deps.metrics.webSockets.inc();
        log.info(
          { route: PATH, status: 101, ...(resume ? { resume: resume.responseId } : {}) },
          'websocket opened',
        );
        ws.once('close', (code) => {
          this.open.delete(socket);
          deps.metrics.webSockets.dec();
          log.info({ code, turns: socket.turns, ms: Date.now() - opened }, 'websocket closed');
        });
      });
    });
  }

  /** The HTTP server's `upgrade` listener: `app` answers the request (its route upgrades it). */
  upgrade(app: Express, req: IncomingMessage, duplex: Duplex, head: Buffer): void {
    // The `upgrade` event's socket is the connection's (a net.Socket, or a TLS one).
    const socket = duplex as Socket;
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://api').pathname;
    if (path !== PATH) return refuse(socket, 404, `Not found: a WebSocket is opened on ${PATH}`);
    if (req.headers.upgrade?.toLowerCase() !== 'websocket' || req.method !== 'GET')
      return refuse(socket, 400, `${PATH} upgrades GET requests to a WebSocket only`);
    if (this.closing) return refuse(socket, 503, 'The API is shutting down: connect again');
    this.upgrades.set(req, { socket, head });
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    // A refusal ends the connection once written (ws clients then abort theirs).
    res.on('finish', () => socket.end());
    app(req as Request, res as unknown as Parameters<Express>[1]);
  }

  /** The API stops: every socket gets 1001 (the SDKs reconnect, and resume on another replica). */
  close(): void {
    this.closing = true;
    for (const socket of this.open) socket.shutdown();
    setTimeout(() => {
      for (const socket of this.open) socket.terminate();
    }, SHUTDOWN_CLOSE_MS).unref();
  }
}
