// One WebSocket of /v1/responses (SPEC OR-5). Its `response.create` messages are turns, run one at
// a time in their order (a FIFO; the socket stops reading while MAX_QUEUED wait), each the create
// HTTP runs (api/responses-create.ts) and then its events (api/responses-socket-stream.ts); a turn
// that fails is one error message, and the socket goes on. The socket keeps the conversation of its
// last response in memory when that one was `store: false`: the only place such a response is
// continued from (never from another socket), forgotten when a turn continuing it fails. A socket
// that drops stops reading and nothing else: its execution goes on, and a new socket resumes it
// (`?response_id=&starting_after=`). No content is logged: ids, statuses and codes.
import type { Logger } from 'pino';
import { WebSocket, type RawData } from 'ws';
import type { Principal } from '../domain/permissions';
import type { ResponseItem } from '../domain/response-items';
import type { AgentExecutionDeps } from './agent-execution-start';
import { clientErrorOf } from './error-handler';
import { webSocketError } from './openai-errors';
import { relayGone, responseFor, viewOfStored } from './response-records';
import { inputOf } from './responses-conversation';
import { startResponse } from './responses-create';
import { createBodyOf } from './responses-socket-event';
import { sendArchived, streamToSocket, type TurnChannel, type TurnOutcome } from './responses-socket-stream';
import { archivedEvents } from './routes/executions';

/** Messages waiting for their turn before the socket stops reading (TCP then holds the client back). */
const MAX_QUEUED = 8;

export interface SocketSettings {
  /** A connection's lifetime: then `websocket_connection_limit_reached`, and the socket closes. */
  limitMs: number;
  /** A ping each interval; a client that did not answer the last one is gone. */
  pingMs: number;
}

/** A reconnect's `?response_id=&starting_after=`: the response to resume, after the last event it had. */
export interface ResumeRequest {
  responseId: string;
  startingAfter?: number | undefined;
}

export class ResponsesSocket {
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;
  /** The last response's conversation (its input and output items), when it was `store: false`. */
  private last: { id: string; items: ResponseItem[] } | undefined;
  private expired = false;
  private ended = false;
  private answeredPing = true;
  private readonly timers: NodeJS.Timeout[];
  private readonly channel: TurnChannel;
  turns = 0;

  constructor(
    private readonly deps: AgentExecutionDeps,
    private readonly ws: WebSocket,
    private readonly principal: Principal,
    private readonly log: Logger,
    private readonly settings: SocketSettings,
    resume: ResumeRequest | undefined,
  ) {
    this.channel = {
      client: { gone: () => ws.readyState !== WebSocket.OPEN, log, end: () => undefined },
      send: (message) => ws.send(JSON.stringify(message)),
    };
    ws.on('message', (data, isBinary) => this.enqueue(() => this.turn(data, isBinary)));
    ws.on('pong', () => (this.answeredPing = true));
    // A protocol error (a frame over the size limit, a bad frame): ws closes the socket itself.
    ws.on('error', (err) => log.warn({ err: err.message }, 'websocket error'));
    ws.on('close', () => this.timers.forEach((timer) => clearTimeout(timer)));
    this.timers = [
      setTimeout(() => this.reachLimit(), settings.limitMs),
      setInterval(() => this.ping(), settings.pingMs),
    ];
    if (resume) this.enqueue(() => this.resume(resume));
  }

  /** The API is going away: 1001, which the SDKs reconnect on (and resume elsewhere). */
  shutdown(): void {
    this.ws.close(1001, 'The API is shutting down: reconnect');
  }

  /** Cuts a socket that did not answer the shutdown's close. */
  terminate(): void {
    this.ws.terminate();
  }

  private enqueue(work: () => Promise<void>): void {
    if (++this.queued >= MAX_QUEUED) this.ws.pause();
    this.queue = this.queue
      .then(() => (this.expired || this.channel.client.gone() ? undefined : work()))
      .catch((err: unknown) => this.log.error({ err }, 'websocket turn failed unexpectedly'))
      .finally(() => {
        if (--this.queued < MAX_QUEUED && this.ws.isPaused) this.ws.resume();
        if (this.expired && this.queued === 0) this.endAtLimit();
      });
  }

  private async turn(data: RawData, isBinary: boolean): Promise<void> {
    this.turns++;
    let previous: string | null | undefined;
    try {
      const body = createBodyOf(data, isBinary);
      previous = body.previous_response_id;
      const cached = (id: string) => (this.last?.id === id.toLowerCase() ? this.last.items : undefined);
      const started = await startResponse(this.deps, { req: null, cached }, this.principal, body);
      this.log.info({ executionId: started.view.id }, 'websocket turn');
      const outcome = await streamToSocket(this.deps, this.channel, started.view);
      this.settle(outcome, previous, body.store === false ? started.items : undefined);
    } catch (err) {
      this.forget(previous);
      this.fail(err);
    }
  }

  /** A reconnect's first turn: the response's events after the last one the client had. */
  private async resume({ responseId, startingAfter }: ResumeRequest): Promise<void> {
    try {
      const stored = await responseFor(this.deps, this.principal, responseId, { whileRetained: true });
      const { record } = stored;
      const view = viewOfStored(stored);
      this.log.info({ executionId: record.id, startingAfter }, 'websocket resume');
      const outcome = (await relayGone(this.deps, record))
        ? sendArchived(this.channel, view, archivedEvents(record, stored.answer, 0), startingAfter)
        : await streamToSocket(this.deps, this.channel, view, startingAfter);
      // Only its own key continues a response (an admin reads another key's, never continues it).
      const own = record.api_key_id === this.principal.keyId;
      this.settle(outcome, undefined, own && !record.store ? inputOf(stored) : undefined);
    } catch (err) {
      this.fail(err);
    }
  }

  /**
   * After a turn: a failed continuation forgets what it continued (the specification: evicted on
   * any 4xx or 5xx); a response that ended is the socket's last, kept in memory when `store: false`
   * (`input` its request's items), read from the database otherwise.
   */
  private settle(
    outcome: TurnOutcome,
    previous: string | null | undefined,
    input: ResponseItem[] | undefined,
  ) {
    if (outcome.failed) return this.forget(previous);
    const { response } = outcome;
    if (!response) return;
    this.last = input
      ? { id: response.id, items: [...input, ...(response.output as unknown as ResponseItem[])] }
      : undefined;
  }

  private forget(previous: string | null | undefined): void {
    if (previous != null && this.last?.id === previous.toLowerCase()) this.last = undefined;
  }

  /** The one message of a turn that failed before its response streamed, as HTTP would answer it. */
  private fail(err: unknown): void {
    const { status, message, err: ours } = clientErrorOf(err, this.log);
    const envelope = webSocketError(status, message, ours?.items);
    this.log.info({ status, code: envelope.error.code }, 'websocket turn refused');
    this.channel.send(envelope);
  }

  private reachLimit(): void {
    this.expired = true;
    if (this.queued === 0) this.endAtLimit();
  }

  /** After the running turn (queued ones are not started): the specification's error, then 1000. */
  private endAtLimit(): void {
    if (this.ended) return;
    this.ended = true;
    const message = `The connection reached its time limit (${this.settings.limitMs / 1000} s): open a new one`;
    this.channel.send(
      webSocketError(400, message, [{ type: 'websocket_connection_limit_reached', message }]),
    );
    this.ws.close(1000, 'connection limit reached');
  }

  private ping(): void {
    // A paused socket reads nothing, its pongs neither: it is busy, not gone.
    if (this.ws.isPaused) return;
    if (!this.answeredPing) {
      this.log.info('websocket client answered no ping: closed');
      this.ws.terminate();
      return;
    }
    this.answeredPing = false;
    this.ws.ping();
  }
}
