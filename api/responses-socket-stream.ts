// A response's events on a WebSocket (SPEC OR-5): the Responses events of HTTP's stream
// (api/responses-events.ts), one text message each, read from the relay as every reader reads it,
// so that a socket resuming a response numbers its events as the one that dropped did. A failure
// ends the turn with one message, the WebSocket error envelope (`status`, `error.code`), where
// HTTP sends `error` then `response.failed`: a WebSocket client takes the first message carrying
// an error code as its turn's end, and would take a later `response.failed` for the end of its
// next turn (docs/decisions.md, "The WebSocket mode").
import type { Response as OpenAiResponse } from 'openai/resources/responses/responses';
import type { ClientEvent } from '../domain/stream-events';
import { followExecutionFor, type ExecutionClient, type ExecutionResponseDeps } from './execution-response';
import { webSocketError } from './openai-errors';
import { ResponsesEventStream, type ResponsesEvent } from './responses-events';
import type { ResponseView } from './responses-objects';

/** Where a turn's events go. */
export interface TurnChannel {
  client: ExecutionClient;
  send(message: object): void;
}

export interface TurnOutcome {
  /** The response that ended (`response.completed` or `response.incomplete`): its output continues it. */
  response?: OpenAiResponse;
  /** It failed or was cancelled: the turn ended with an error message. */
  failed: boolean;
}

const isTerminal = (event: ResponsesEvent): event is ResponsesEvent & { response: OpenAiResponse } =>
  event.type === 'response.completed' || event.type === 'response.incomplete';

/** The error event's code, flat or nested (`{error: {code}}`), as the Responses stream words it. */
function codeOf(event: ResponsesEvent | undefined): string | undefined {
  const e = event as { code?: unknown; error?: { code?: unknown } } | undefined;
  const code = e?.error?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Sends a response's events after `after` (a resume's `starting_after`) and says how it ended. */
class TurnWriter {
  readonly outcome: TurnOutcome = { failed: false };
  private ended = false;

  constructor(
    private readonly events: ResponsesEventStream,
    private readonly channel: TurnChannel,
    private readonly responseId: string,
    private readonly after: number,
  ) {}

  send(list: ResponsesEvent[]): void {
    for (const event of list) {
      if (this.ended) return;
      // The end is known even when the client had it: a resume after the last event sends nothing.
      if (isTerminal(event)) {
        this.outcome.response = event.response;
        this.ended = true;
      }
      if (event.sequence_number > this.after) this.channel.send(event);
    }
  }

  accept(list: ClientEvent[]): void {
    for (const event of list) {
      if (this.ended) return;
      const mapped = this.events.accept(event);
      if (event.type === 'error') this.fail(event.status, event.detail, mapped[0]);
      else this.send(mapped);
    }
  }

  private fail(status: number, detail: string, event: ResponsesEvent | undefined): void {
    this.ended = true;
    this.outcome.failed = true;
    const seq = event?.sequence_number ?? this.after + 1;
    if (seq <= this.after) return;
    const envelope = webSocketError(status, detail);
    const code = codeOf(event);
    this.channel.send({
      ...envelope,
      error: { ...envelope.error, ...(code ? { code } : {}) },
      sequence_number: seq,
      response_id: this.responseId,
    });
  }
}

/**
 * Follows the response on the channel until its end (or the socket's): every event after
 * `startingAfter`, all of them without it.
 */
export async function streamToSocket(
  deps: ExecutionResponseDeps,
  channel: TurnChannel,
  view: ResponseView,
  startingAfter = -1,
): Promise<TurnOutcome> {
  const events = new ResponsesEventStream(view);
  const writer = new TurnWriter(events, channel, view.id, startingAfter);
  await followExecutionFor(deps, channel.client, view.id, {
    // The response's id is what a client needs to resume it: it goes out at once, and a failure
    // before the model answered is the envelope as any later one (no HTTP status to hold).
    hold: false,
    fail: (failure) => Promise.reject(failure),
    open: () => writer.send(events.begin()),
    write: (list) => writer.accept(list),
    interrupted:
      'The answer stream was interrupted: reconnect with response_id and starting_after, or retrieve the response',
    close: () => undefined,
  });
  return writer.outcome;
}

/**
 * A finished response whose relay log is gone, rebuilt from its record and answer
 * (`archivedEvents`): from the start, or after `startingAfter` starting the response over there.
 */
export function sendArchived(
  channel: TurnChannel,
  view: ResponseView,
  archived: ClientEvent[],
  startingAfter: number | undefined,
): TurnOutcome {
  const events = new ResponsesEventStream(view);
  const writer = new TurnWriter(events, channel, view.id, -1);
  writer.send(startingAfter === undefined ? events.begin() : events.resumeAfter(startingAfter));
  writer.accept(archived);
  return writer.outcome;
}
