// An execution's client events (SPEC §9.5) as the Responses API streams them (issue 28):
// `response.created`, `response.in_progress`, one message item (`response.output_item.added`,
// `response.content_part.added`, `response.output_text.delta`..., `.done`s) and
// `response.completed` (`response.incomplete` when the model stopped short, with its reason); or
// `error` then `response.failed`. A pure function of the events, which are a pure function of the
// relay's log: a resumed stream numbers its events exactly as the live one did (`sequence_number`
// from 0), whatever connection or API replica reads it.
//
// A retried model attempt (a `reset`): nothing is shown while the new attempt repeats the text the
// client already has, and the stream goes on from there; where it says something else, the
// response starts over: `response.in_progress` with an empty output (the SDKs' stream helpers
// replace their snapshot with it), then a new message item (a new `item_id`) with the new text.
// A client never holds text of two attempts (docs/decisions.md, "OpenAI-compatible routes").
import type { Response as OpenAiResponse, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { ClientEvent, IncompleteDetails, Usage } from '../domain/stream-events';
import {
  itemIdOf,
  messageItem,
  responseObject,
  type ResponseState,
  type ResponseView,
} from './responses-objects';

type Unnumbered<E> = E extends unknown ? Omit<E, 'sequence_number'> : never;
export type ResponsesEvent = ResponseStreamEvent;

/** The `error` event's and the failed response's words for an execution's failure status. */
const FAILURE_CODES: Record<number, string> = {
  400: 'invalid_prompt',
  404: 'not_found',
  410: 'answer_expired',
  499: 'cancelled',
  502: 'upstream_error',
  503: 'service_unavailable',
};

export class ResponsesEventStream {
  private seq = -1;
  /** The open message item: its id and the text the client was sent in it. */
  private item: { id: string; text: string } | undefined;
  private items = 0;
  /** After a reset: the retried attempt's text so far, while it repeats what the client has. */
  private repeating: string | undefined;
  private ended = false;

  constructor(private readonly view: ResponseView) {}

  /** The first two events of every stream. */
  begin(): ResponsesEvent[] {
    return [
      this.next({ type: 'response.created', response: this.response({ status: 'in_progress' }) }),
      this.next({ type: 'response.in_progress', response: this.response({ status: 'in_progress' }) }),
    ];
  }

  /**
   * A stream rebuilt after the client's event `after` without the events that led there (an
   * archived execution): numbered from `after + 1`, it starts the response over.
   */
  resumeAfter(after: number): ResponsesEvent[] {
    this.seq = after;
    return [this.next({ type: 'response.in_progress', response: this.response({ status: 'in_progress' }) })];
  }

  accept(event: ClientEvent): ResponsesEvent[] {
    if (this.ended) return [];
    switch (event.type) {
      case 'delta':
        return this.delta(event.text);
      case 'reset':
        // Only text the client was shown needs undoing; a reset during a repeat starts it over.
        if (this.item && this.item.text !== '') this.repeating = '';
        return [];
      case 'done':
        return this.done(event.usage, event.incomplete_details);
      case 'error':
        return this.failed(event.status, event.detail);
    }
  }

  private delta(text: string): ResponsesEvent[] {
    if (this.repeating === undefined) return [...this.open(), this.text(text)];
    const sent = this.item!.text;
    const repeated = this.repeating + text;
    if (sent.startsWith(repeated)) {
      this.repeating = repeated;
      return [];
    }
    this.repeating = undefined;
    if (repeated.startsWith(sent)) return [this.text(repeated.slice(sent.length))];
    return [...this.restart(), this.text(repeated)];
  }

  /** The answer's end: `response.completed`, or `response.incomplete` with the model's reason. */
  private done(usage: Usage, incomplete?: IncompleteDetails): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    // The retried attempt ended with less than the client holds: start over with what it said.
    if (this.repeating !== undefined && this.repeating !== this.item!.text) {
      out.push(...this.restart());
      if (this.repeating !== '') out.push(this.text(this.repeating));
    }
    this.repeating = undefined;
    out.push(...this.open());
    const { id, text } = this.item!;
    const position = { item_id: id, output_index: 0, content_index: 0 };
    const status = incomplete ? 'incomplete' : 'completed';
    const item = messageItem(id, text, status);
    this.ended = true;
    out.push(
      this.next({ type: 'response.output_text.done', ...position, text, logprobs: [] }),
      this.next({ type: 'response.content_part.done', ...position, part: item.content[0]! }),
      this.next({ type: 'response.output_item.done', output_index: 0, item }),
      this.next({
        type: incomplete ? 'response.incomplete' : 'response.completed',
        // completed_at stays null here: a replay must carry the same object (GET has the time).
        response: this.response({
          status,
          message: item,
          usage,
          ...(incomplete ? { incompleteDetails: incomplete } : {}),
        }),
      }),
    );
    return out;
  }

  private failed(status: number, detail: string): ResponsesEvent[] {
    this.ended = true;
    const cancelled = status === 499;
    return [
      this.next({
        type: 'error',
        code: FAILURE_CODES[status] ?? 'server_error',
        message: detail,
        param: null,
      }),
      this.next({
        type: 'response.failed',
        response: this.response({
          status: cancelled ? 'cancelled' : 'failed',
          error: cancelled ? null : { status, message: detail },
        }),
      }),
    ];
  }

  /** Opens a message item when none is open. */
  private open(): ResponsesEvent[] {
    if (this.item) return [];
    const id = itemIdOf(this.view, ++this.items);
    this.item = { id, text: '' };
    const position = { item_id: id, output_index: 0, content_index: 0 };
    return [
      this.next({
        type: 'response.output_item.added',
        output_index: 0,
        item: messageItem(id, '', 'in_progress'),
      }),
      this.next({
        type: 'response.content_part.added',
        ...position,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      }),
    ];
  }

  /** The response starts over: an empty snapshot, then a new item. */
  private restart(): ResponsesEvent[] {
    this.item = undefined;
    return [
      this.next({ type: 'response.in_progress', response: this.response({ status: 'in_progress' }) }),
      ...this.open(),
    ];
  }

  private text(delta: string): ResponsesEvent {
    const item = this.item!;
    item.text += delta;
    return this.next({
      type: 'response.output_text.delta',
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  private response(state: ResponseState): OpenAiResponse {
    return responseObject(this.view, state);
  }

  private next(event: Unnumbered<ResponsesEvent>): ResponsesEvent {
    return { ...event, sequence_number: ++this.seq } as ResponsesEvent;
  }
}
