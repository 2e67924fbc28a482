// What one Responses API stream says of the answer, event by event (SPEC §7 LLM-2, issue 33),
// whatever OpenAI-compatible server sent it. The answer's text is the output_text deltas of its
// message items, in order, whatever items and content parts they come in (as the SDKs'
// `output_text` joins them); empty deltas add nothing. A reasoning item's summary or text is the
// model working, not the answer; its tokens are in the response's `output_tokens`. A refusal is
// the model's final word: a failure that is not retried. `response.incomplete` ends the answer
// with the text so far and the reason; `error` and `response.failed` break the stream (retried).
import { ApplicationFailure } from '@temporalio/common';
import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { IncompleteDetails, Usage } from '../domain/stream-events';
import { FailureType } from '../workflows/contracts';

/** How the answer ended: its usage, and why it stopped short when it did. */
export interface AnswerEnd {
  usage: Usage;
  incomplete?: IncompleteDetails;
}

/** What an event means for the stream: answer text it adds, and whether the model made progress. */
export interface Reading {
  text?: string;
  progress: boolean;
}

const NOTHING: Reading = { progress: false };
const WORKING: Reading = { progress: true };

/** The provider's reason is shown to clients: kept short, whatever a proxy sends. */
const MAX_REASON = 100;

const usageOf = (response: Response): Usage => ({
  input_tokens: response.usage?.input_tokens ?? 0,
  output_tokens: response.usage?.output_tokens ?? 0,
});

const hasRefusal = (response: Response): boolean =>
  (response.output ?? []).some(
    (item) => item.type === 'message' && item.content.some((part) => part.type === 'refusal'),
  );

/** The model refused: its refusal is content, so only the fact reaches the detail (and history). */
export const modelRefused = (): ApplicationFailure =>
  ApplicationFailure.create({
    type: FailureType.LlmRefused,
    message: 'Model refused to answer',
    details: [{ message: 'the model refused to answer' }],
    nonRetryable: true,
  });

export const badStream = (what: string): ApplicationFailure =>
  ApplicationFailure.create({
    type: FailureType.LlmBadStream,
    message: `Model stream ${what}`,
    details: [{ message: `stream ${what}` }],
  });

export class ModelAnswer {
  /** Output items that are not messages (reasoning, tool calls): no text of theirs is the answer. */
  private readonly otherItems = new Set<string>();
  private refused = false;
  /** Set by `response.completed` or `response.incomplete`. */
  end: AnswerEnd | undefined;

  /** Reads one event; throws the failure it reports (a refusal, a broken stream). */
  read(event: ResponseStreamEvent): Reading {
    switch (event.type) {
      case 'response.output_item.added':
        if (event.item.type !== 'message' && event.item.id) this.otherItems.add(event.item.id);
        return NOTHING;
      case 'response.output_text.delta':
        return this.otherItems.has(event.item_id) ? WORKING : { text: event.delta, progress: true };
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return WORKING;
      case 'response.refusal.delta':
        this.refused = true;
        return WORKING;
      case 'response.refusal.done':
        throw modelRefused();
      case 'response.completed':
        if (this.refused || hasRefusal(event.response)) throw modelRefused();
        this.end = { usage: usageOf(event.response) };
        return NOTHING;
      case 'response.incomplete': {
        const reason = String(event.response.incomplete_details?.reason ?? 'unknown').slice(0, MAX_REASON);
        this.end = { usage: usageOf(event.response), incomplete: { reason } };
        return NOTHING;
      }
      case 'error':
      case 'response.failed':
        throw badStream(`reported ${event.type}`);
      default:
        return NOTHING;
    }
  }
}
