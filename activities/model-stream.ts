// One streamed Responses API call (SPEC §7, §9.6): `start` to the relay once the model answered
// 200, its deltas batched in time (activities/delta-batcher.ts), and the answer with its usage
// once the model completed. A silent model fails as `Llm.Stalled` after the no-progress time;
// waiting for our own relay (Redis restarting) is not the model being silent.
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import { toResponsesRequest, type ChatMessage } from '../domain/llm-request';
import type { RelayEvent, Usage } from '../domain/stream-events';
import { FailureType } from '../workflows/contracts';
import { DeltaBatcher } from './delta-batcher';
import { classifyModelError } from './failures';

export interface ModelCall {
  client: OpenAI;
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  attempt: number;
  noProgressMs: number;
  /** Deltas arriving within this many ms of the last published one go out together. */
  batchMs: number;
  /** Stops the call (cancellation, a lost claim): it then fails with a CancelledFailure. */
  stop: AbortSignal;
  publish(event: RelayEvent): Promise<void>;
}

export async function streamAnswer(call: ModelCall): Promise<{ text: string; usage: Usage }> {
  const abort = new AbortController();
  const onStop = (): void => abort.abort();
  call.stop.addEventListener('abort', onStop);
  let stalled = false;
  let progressTimer: NodeJS.Timeout | undefined;
  const armProgressTimer = (): void => {
    clearTimeout(progressTimer);
    progressTimer = setTimeout(() => {
      stalled = true;
      abort.abort();
    }, call.noProgressMs);
  };
  const deltas = new DeltaBatcher(call.attempt, call.publish, call.batchMs);
  try {
    armProgressTimer();
    const stream = await call.client.responses.create(
      {
        model: call.model,
        ...toResponsesRequest(call.messages, call.temperature),
        stream: true,
      },
      { signal: abort.signal },
    );
    clearTimeout(progressTimer);
    await call.publish({ type: 'start', attempt: call.attempt });
    armProgressTimer();
    let text = '';
    let usage: Usage | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') {
        text += event.delta;
        armProgressTimer();
        deltas.push(event.delta);
      } else if (event.type === 'response.completed') {
        usage = {
          input_tokens: event.response.usage?.input_tokens ?? 0,
          output_tokens: event.response.usage?.output_tokens ?? 0,
        };
      } else if (event.type === 'response.incomplete') {
        // The model stopped on purpose (its output limit, a content filter): asking again would
        // pay for the same end, so it is not retried (docs/decisions.md).
        const reason = event.response.incomplete_details?.reason;
        throw ApplicationFailure.create({
          type: FailureType.LlmRejected,
          message: `Model stopped before completing: ${reason ?? 'unknown reason'}`,
          details: [{ message: `incomplete: ${reason ?? 'unknown'}` }],
          nonRetryable: true,
        });
      } else if (event.type === 'error' || event.type === 'response.failed') {
        throw ApplicationFailure.create({
          type: FailureType.LlmBadStream,
          message: `Model stream reported ${event.type}`,
          details: [{ message: `stream event ${event.type}` }],
        });
      }
    }
    if (!usage) {
      throw ApplicationFailure.create({
        type: FailureType.LlmBadStream,
        message: 'Model stream ended before response.completed',
        details: [{ message: 'stream ended before response.completed' }],
      });
    }
    // The rest of the answer reaches the relay; that wait is not the model's silence.
    clearTimeout(progressTimer);
    await deltas.flush();
    return { text, usage };
  } catch (err) {
    if (call.stop.aborted) throw new CancelledFailure('Model call cancelled');
    if (stalled) {
      throw ApplicationFailure.create({
        type: FailureType.LlmStalled,
        message: `No progress from the model for ${call.noProgressMs} ms`,
        details: [{ message: `no progress for ${call.noProgressMs} ms` }],
      });
    }
    throw classifyModelError(err);
  } finally {
    // Deltas received before a failure are out before the attempt reports it.
    await deltas.settled();
    clearTimeout(progressTimer);
    call.stop.removeEventListener('abort', onStop);
  }
}
