// Issue 33: what each Responses API event means for the answer (activities/model-answer.ts),
// whatever OpenAI-compatible server sent it: the text is the output_text deltas of message items
// only; reasoning is progress, not text; a refusal is a final, non-retryable failure whose words
// stay out of the detail; `response.incomplete` ends the answer with its reason; `error` and
// `response.failed` break the stream (retryable).
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { ModelAnswer } from '../../activities/model-answer';
import { FailureType } from '../../workflows/contracts';
import { describeFailure } from '../../workflows/describe-failure';

type Event = Record<string, unknown> & { type: string };
const ev = (e: Event) => ({ sequence_number: 0, ...e }) as unknown as ResponseStreamEvent;
const usage = { input_tokens: 5, output_tokens: 42, output_tokens_details: { reasoning_tokens: 40 } };
const response = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'resp_1',
  status,
  output: [],
  usage,
  ...extra,
});
const delta = (item: string, text: string) =>
  ev({ type: 'response.output_text.delta', item_id: item, output_index: 0, content_index: 0, delta: text });

/** The text and progress of reading every event; the failure thrown, if one was. */
function readAll(events: ResponseStreamEvent[]) {
  const answer = new ModelAnswer();
  let text = '';
  let progress = 0;
  try {
    for (const event of events) {
      const reading = answer.read(event);
      if (reading.text !== undefined) text += reading.text;
      if (reading.progress) progress += 1;
    }
  } catch (failure) {
    return { text, progress, answer, failure: failure as ApplicationFailure };
  }
  return { text, progress, answer };
}

describe('ModelAnswer', () => {
  it('the text of several message items and parts, empty deltas adding nothing; usage from the completed response', () => {
    const r = readAll([
      ev({ type: 'response.output_item.added', output_index: 0, item: { id: 'msg_1', type: 'message' } }),
      delta('msg_1', ''),
      delta('msg_1', 'One.'),
      ev({ type: 'response.output_text.annotation.added', item_id: 'msg_1', annotation: {} }),
      delta('msg_1', ' Two.'),
      ev({ type: 'response.output_item.added', output_index: 1, item: { id: 'msg_2', type: 'message' } }),
      delta('msg_2', ' Three.'),
      delta('msg_2', ''),
      ev({ type: 'response.completed', response: response('completed') }),
    ]);
    expect(r.failure).toBeUndefined();
    expect(r.text).toBe('One. Two. Three.');
    expect(r.answer.end).toEqual({ usage: { input_tokens: 5, output_tokens: 42 } });
  });

  it('a reasoning item: its summary and text deltas are progress, not answer text', () => {
    const r = readAll([
      ev({ type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning' } }),
      ev({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: 'Thinking' }),
      ev({ type: 'response.reasoning_text.delta', item_id: 'rs_1', delta: 'raw thought' }),
      // A server that put text deltas on the reasoning item: still not the answer.
      delta('rs_1', 'leaked'),
      ev({ type: 'response.output_item.added', output_index: 1, item: { id: 'msg_1', type: 'message' } }),
      delta('msg_1', 'Answer'),
      ev({ type: 'response.completed', response: response('completed') }),
    ]);
    expect(r.text).toBe('Answer');
    expect(r.progress).toBe(4);
  });

  it('a refusal: Llm.Refused, not retryable, at refusal.done; the detail says the model refused and nothing of what it said', () => {
    const r = readAll([
      ev({ type: 'response.refusal.delta', item_id: 'msg_1', delta: "I can't" }),
      ev({ type: 'response.refusal.done', item_id: 'msg_1', refusal: "I can't help with that." }),
    ]);
    expect(r.failure).toBeInstanceOf(ApplicationFailure);
    expect(r.failure).toMatchObject({ type: FailureType.LlmRefused, nonRetryable: true });
    const wrapped = new ActivityFailure(
      'x',
      'callModel',
      '1',
      RetryState.NON_RETRYABLE_FAILURE,
      'worker',
      r.failure,
    );
    expect(describeFailure(wrapped)).toMatchObject({ status: 502, detail: 'Model refused to answer' });
    expect(JSON.stringify([r.failure!.message, r.failure!.details])).not.toContain("can't");
  });

  it('a refusal seen only in the completed response (or as deltas without done) fails the same way', () => {
    const refusal = { type: 'message', id: 'msg_1', content: [{ type: 'refusal', refusal: 'No.' }] };
    const completed = ev({
      type: 'response.completed',
      response: response('completed', { output: [refusal] }),
    });
    expect(readAll([completed]).failure).toMatchObject({ type: FailureType.LlmRefused });
    const deltasOnly = [
      ev({ type: 'response.refusal.delta', item_id: 'msg_1', delta: 'No.' }),
      ev({ type: 'response.completed', response: response('completed') }),
    ];
    expect(readAll(deltasOnly).failure).toMatchObject({ type: FailureType.LlmRefused });
  });

  it('response.incomplete ends the answer with its text and reason (a proxy’s long reason is cut)', () => {
    const r = readAll([
      delta('msg_1', 'Half an'),
      ev({
        type: 'response.incomplete',
        response: response('incomplete', { incomplete_details: { reason: 'max_output_tokens' } }),
      }),
    ]);
    expect(r.failure).toBeUndefined();
    expect(r.text).toBe('Half an');
    expect(r.answer.end).toEqual({
      usage: { input_tokens: 5, output_tokens: 42 },
      incomplete: { reason: 'max_output_tokens' },
    });
    const long = readAll([
      ev({
        type: 'response.incomplete',
        response: response('incomplete', { incomplete_details: { reason: 'x'.repeat(500) } }),
      }),
    ]);
    expect(long.answer.end!.incomplete!.reason).toHaveLength(100);
  });

  it.each(['error', 'response.failed'])('%s breaks the stream: Llm.BadStream, retryable', (type) => {
    const r = readAll([
      delta('msg_1', 'a'),
      ev({ type, code: 'server_error', message: 'x', response: response('failed') }),
    ]);
    expect(r.text).toBe('a');
    expect(r.failure).toMatchObject({ type: FailureType.LlmBadStream, nonRetryable: false });
  });
});
