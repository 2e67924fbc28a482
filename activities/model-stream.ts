// One streamed Responses API call (SPEC §7, §9.6): `start` to the relay once the model answered
// 200, its deltas batched in time (activities/delta-batcher.ts), and the answer with its usage
// once the model completed. A silent model fails as `Llm.Stalled` after the no-progress time: the
// timer runs from before the request (a server that never sends its headers is silent too), and
// text and reasoning deltas re-arm it; waiting for our own relay (Redis restarting) is not the
// model being silent.
//
// Resumable mode (issue 27, activities/model-resume.ts): the call is a background response. A
// connection to the model that breaks mid-answer is resumed after the last event received,
// within the attempt. An attempt that resumes an earlier one's response publishes `resume` (the
// relayed text continues, no `reset`) with its first new event; when the response cannot be
// resumed before that (forgotten, failed, cancelled), the attempt asks anew, as without the mode.
// The provider numbers a response's events one by one: a repeated number is skipped, and one that
// skips ahead (an event came out of order) resumes after the last in order, so the text relayed
// is always the response's in its order.
//
// What each event means for the answer (issue 33: reasoning, refusals, several items, empty
// deltas, `response.incomplete`) is activities/model-answer.ts's.
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { toResponsesRequest, type ChatMessage } from '../domain/llm-request';
import type { RelayEvent } from '../domain/stream-events';
import type { StoredAnswer } from '../services/answers';
import { FailureType } from '../workflows/contracts';
import { DeltaBatcher } from './delta-batcher';
import { classifyModelError } from './failures';
import { badStream, ModelAnswer } from './model-answer';
import { cancelAtProvider, type ModelProgress, type ResumeOutcome, type Resumption } from './model-resume';

interface ModelCall {
  client: OpenAI;
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  attempt: number;
  noProgressMs: number;
  /** Deltas arriving within this many ms of the last published one go out together. */
  batchMs: number;
  /** The retry policy's longest wait between attempts: a server's retry hint is capped to it. */
  maxRetryDelayMs?: number;
  /** Stops the call (cancellation, a lost claim): it then fails with a CancelledFailure. */
  stop: AbortSignal;
  publish(event: RelayEvent): Promise<void>;
  /** Resumable mode: the call is a background response. */
  background?: BackgroundCall;
}

interface BackgroundCall {
  /** An earlier attempt's response, to resume instead of asking anew. */
  resume?: Resumption;
  /** The response and how far its text is relayed, whenever either changes. */
  progress(progress: ModelProgress): void;
  /** A break resumed, or a resume that fell back to asking anew. */
  outcome(outcome: ResumeOutcome): void;
}

/** Breaks of one attempt's connection resumed in a row before the attempt fails (and is retried). */
const MAX_RECONNECTS = 3;
/** The pause before the n-th reconnect in a row: n times this. */
const RECONNECT_PAUSE_MS = 250;

/** The resumed response could not go on (before anything of this attempt was published). */
class ResumeLost extends Error {
  override name = 'ResumeLost';
}
/** The model's stream ended before `response.completed`. */
class StreamEnded extends Error {
  override name = 'StreamEnded';
}
/** Resumable mode: an event numbered past the next one (one came out of order): resume after the last in order. */
class OutOfOrder extends Error {
  override name = 'OutOfOrder';
}

/** A break that resuming again may get past (the connection, an early end, the provider's 5xx or 429). */
const isPassing = (err: unknown): boolean => {
  const status = (err as { status?: unknown } | null)?.status;
  return !(err instanceof ResumeLost) && (typeof status !== 'number' || status === 429 || status >= 500);
};

export async function streamAnswer(call: ModelCall): Promise<StoredAnswer> {
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
  const bg = call.background;
  let resume = bg?.resume;
  let responseId = resume?.responseId;
  /** The last event received, and whether this attempt published its `start` or `resume`. */
  let lastSeq = resume?.after;
  let announced = false;
  let text = resume?.text ?? '';
  let answer = new ModelAnswer();
  const deltas = new DeltaBatcher(call.attempt, call.publish, call.batchMs, (relayed) =>
    bg?.progress({ responseId: responseId!, relayed }),
  );
  const announce = async (): Promise<void> => {
    if (announced) return;
    announced = true;
    if (resume) {
      const through = resume.after;
      await call.publish({
        type: 'resume',
        attempt: call.attempt,
        text: resume.text,
        response: resume.responseId,
        ...(through !== undefined ? { through } : {}),
      });
      bg!.outcome('resumed');
      bg!.progress({ responseId: resume.responseId, ...(through !== undefined ? { relayed: through } : {}) });
    } else
      await call.publish({ type: 'start', attempt: call.attempt, ...(bg ? { response: responseId } : {}) });
  };
  const open = (): Promise<AsyncIterable<ResponseStreamEvent>> =>
    responseId !== undefined
      ? call.client.responses.retrieve(
          responseId,
          { stream: true, ...(lastSeq !== undefined ? { starting_after: lastSeq } : {}) },
          { signal: abort.signal },
        )
      : call.client.responses.create(
          {
            model: call.model,
            ...toResponsesRequest(call.messages, call.temperature),
            stream: true,
            ...(bg ? { background: true, store: true } : {}),
          },
          { signal: abort.signal },
        );
  /** Resumable mode: whether the event is the next one; a repeat is skipped, a gap resumes. */
  const inOrder = (seq: number): boolean => {
    if (lastSeq !== undefined && seq <= lastSeq) return false;
    if (lastSeq !== undefined && seq > lastSeq + 1) throw new OutOfOrder();
    lastSeq = seq;
    return true;
  };
  const handle = async (event: ResponseStreamEvent): Promise<void> => {
    if (bg && !inOrder(event.sequence_number)) return;
    if (event.type === 'response.created' && bg && responseId === undefined) {
      responseId = event.response.id;
      await announce();
      bg.progress({ responseId });
      return;
    }
    if ((event.type === 'error' || event.type === 'response.failed') && resume && !announced)
      throw new ResumeLost();
    const reading = answer.read(event);
    if (reading.progress) armProgressTimer();
    if (reading.text !== undefined) {
      await announce();
      text += reading.text;
      deltas.push(reading.text, bg ? event.sequence_number : undefined);
    }
    if (answer.end) await announce();
  };
  /** Resumable mode: the earlier response cannot go on; this attempt asks anew. */
  const restart = (err: unknown): void => {
    if ((err as { status?: unknown } | null)?.status !== 404) void cancelAtProvider(call.client, responseId!);
    resume = undefined;
    responseId = lastSeq = undefined;
    text = '';
    answer = new ModelAnswer();
    bg!.outcome('restarted');
  };

  try {
    for (let breaks = 0; ;) {
      armProgressTimer();
      let progressed = false;
      try {
        const stream = await open();
        clearTimeout(progressTimer);
        if (!bg) await announce();
        armProgressTimer();
        for await (const event of stream) {
          await handle(event);
          progressed = true;
        }
        if (answer.end) break;
        throw resume && !announced ? new ResumeLost() : new StreamEnded();
      } catch (err) {
        if (!bg || call.stop.aborted || stalled || err instanceof ApplicationFailure) throw err;
        if (answer.end) break; // cut after the answer's end: it is whole
        if (progressed) breaks = 0;
        if (resume && !announced && !isPassing(err)) restart(err);
        else if (responseId !== undefined && isPassing(err) && breaks++ < MAX_RECONNECTS) {
          if (announced) bg.outcome('reconnected');
          await sleep(RECONNECT_PAUSE_MS * breaks, undefined, { signal: abort.signal });
        } else if (responseId !== undefined && !(err instanceof StreamEnded)) {
          // The response is gone mid-answer (forgotten, refused): the retry asks anew.
          throw badStream('could not be resumed');
        } else throw err;
      }
    }
    // The rest of the answer reaches the relay; that wait is not the model's silence.
    clearTimeout(progressTimer);
    await deltas.flush();
    const { usage, incomplete } = answer.end!;
    return { text, usage, ...(incomplete ? { incomplete_details: incomplete } : {}) };
  } catch (err) {
    if (call.stop.aborted) throw new CancelledFailure('Model call cancelled');
    if (stalled) {
      // A silent background response is not resumed: the retry then asks anew.
      if (bg && responseId !== undefined) void cancelAtProvider(call.client, responseId);
      throw ApplicationFailure.create({
        type: FailureType.LlmStalled,
        message: `No progress from the model for ${call.noProgressMs} ms`,
        details: [{ message: `no progress for ${call.noProgressMs} ms` }],
      });
    }
    if (err instanceof StreamEnded || err instanceof ResumeLost || err instanceof OutOfOrder)
      throw badStream('ended before response.completed');
    throw classifyModelError(err, call.maxRetryDelayMs);
  } finally {
    // Deltas received before a failure are out before the attempt reports it.
    await deltas.settled();
    clearTimeout(progressTimer);
    call.stop.removeEventListener('abort', onStop);
  }
}
