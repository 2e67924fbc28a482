// The LLM activity (SPEC §7, §9.3 EX-6, §9.6): one streamed Responses API call per attempt
// (activities/model-stream.ts), run as one attempt of the execution's model stream
// (activities/model-attempt.ts: heartbeats, the claim, what stops it). The answer is stored, then
// `done` published. The client never retries by itself: Temporal does (LLM-3).
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { LlmStore } from '../db/llm-store';
import type { ExecutionStore } from '../db/execution-store';
import type { IdempotencyStore } from '../infra/idempotency-store';
import { closingEvents } from '../domain/stream-events';
import { ModelClients } from '../infra/model-clients';
import type { Relay } from '../infra/relay';
import { FailureType, type CallModelInput, type CallModelResult } from '../workflows/contracts';
import { answerPayloadId, type ModelRequestContent, type StoredAnswer } from '../services/answers';
import type { ExecutionScratch } from './execution-scratch';
import { ModelAttempt } from './model-attempt';
import { cancelAtProvider, progressOf, resumptionFrom, type ResumeOutcome } from './model-resume';
import { streamAnswer } from './model-stream';
import { relayWriter } from './relay-writer';
import type { RunningStreams } from './running-streams';
import { throughDatabase } from './through-database';

export interface CallModelDeps {
  llms: LlmStore;
  executions: ExecutionStore;
  relay: Relay;
  /** Which attempt streams each execution's answer (activities/model-stream-claim.ts). */
  modelStreams: IdempotencyStore;
  /** The model streams of this process, stopped by their execution's stop notice. */
  runningStreams: RunningStreams;
  /** Deltas within this many ms of the last published one go out as one relay event. */
  relayBatchMs: number;
  /**
   * The LLM retry profile's maximum interval, for servers that do not report an activity's retry
   * policy to the worker (the dev server does not): a model server's retry hint is capped to it.
   */
  llmRetryMaxIntervalMs?: number;
  /** The rendered messages of an execution whose render ran in this process. */
  scratch: ExecutionScratch;
  /** Counts how resumable LLMs' streams went on after a break (infra/activity-metrics.ts). */
  modelResumes?: { inc(labels: { outcome: ResumeOutcome }): void };
}

/** The activity's retry policy's maximum interval in ms, else the configured one. */
const retryDelayCap = (reported: unknown, configured: number | undefined): { maxRetryDelayMs?: number } => {
  const cap = typeof reported === 'number' ? reported : configured;
  return cap !== undefined ? { maxRetryDelayMs: cap } : {};
};

export function createCallModel(deps: CallModelDeps) {
  const clients = new ModelClients();
  const { publish, readLog } = relayWriter(deps.relay);

  return async function callModel(input: CallModelInput): Promise<CallModelResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt + (input.attemptOffset ?? 0);
    const answerId = answerPayloadId(input.executionId);
    // Every read before the model call at once (one round trip's wait), and only what is not at
    // hand: a first attempt has no earlier one that could have stored the answer, the LLM comes
    // from an in-process copy, and the rendered messages from this process's render.
    const rendered = deps.scratch.takeRendered(input.executionId, input.requestPayloadId);
    const [stored, extra, llm, request] = await throughDatabase(
      'read the request',
      ctx.cancellationSignal,
      () =>
        Promise.all([
          ctx.info.attempt > 1 ? deps.executions.getPayload<StoredAnswer>(answerId) : null,
          input.doneExtraPayloadId
            ? deps.executions.getPayload<Record<string, unknown>>(input.doneExtraPayloadId)
            : null,
          deps.llms.getForCall(input.llmId),
          rendered
            ? { messages: rendered }
            : deps.executions.getPayload<ModelRequestContent>(input.requestPayloadId),
        ]),
    );
    /**
     * An earlier attempt stored the answer but did not complete (its worker died after storing
     * it): the model is not paid twice, and the stream ends from what the relay holds, so that
     * readers keep the text they have (domain/stream-events.ts).
     */
    const answeredBefore = async (answer: StoredAnswer): Promise<CallModelResult> => {
      const closing = closingEvents(await readLog(input.executionId), answer, attempt, extra ?? undefined);
      for (const event of closing) await publish(input.executionId, event);
      return { answerPayloadId: answerId, usage: answer.usage, attempt };
    };
    if (stored) return answeredBefore(stored);
    if (!llm)
      throw ApplicationFailure.create({
        type: FailureType.NotFound,
        message: `LLM ${input.llmId} not found`,
        nonRetryable: true,
      });
    if (!request) {
      throw ApplicationFailure.create({
        type: FailureType.NotFound,
        message: 'Execution content expired',
        nonRetryable: true,
      });
    }

    const run = new ModelAttempt(ctx, input.executionId, attempt, deps.modelStreams, deps.runningStreams);
    // Resumable mode (issue 27): the background response an earlier attempt left in its heartbeat
    // details, kept in this attempt's until it has its own.
    const prior = llm.resumable ? progressOf(ctx.info.heartbeatDetails) : undefined;
    let responseId = prior?.responseId;
    if (prior) run.progress(prior);
    run.begin();
    try {
      const { waited } = await run.takeClaim(ctx.info.attempt === 1 && !input.attemptOffset);
      if (waited) {
        // The attempt that streamed meanwhile may have stored the answer: never pay twice.
        const answer = await throughDatabase('read the answer', run.stop.signal, () =>
          deps.executions.getPayload<StoredAnswer>(answerId),
        );
        if (answer) return await answeredBefore(answer);
      }
      // A retry resumes where the relayed text ends (activities/model-resume.ts).
      const resume =
        llm.resumable && ctx.info.attempt > 1
          ? resumptionFrom(await readLog(input.executionId), prior)
          : undefined;
      const answer = await streamAnswer({
        client: clients.of(llm),
        model: llm.model,
        messages: request.messages,
        ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
        attempt,
        noProgressMs: input.noProgressMs,
        batchMs: deps.relayBatchMs,
        ...retryDelayCap(ctx.info.retryPolicy?.maximumInterval, deps.llmRetryMaxIntervalMs),
        stop: run.stop.signal,
        publish: (event) => publish(input.executionId, event),
        ...(llm.resumable
          ? {
              background: {
                ...(resume ? { resume } : {}),
                progress: (progress) => {
                  responseId = progress.responseId;
                  run.progress(progress);
                },
                outcome: (outcome) => deps.modelResumes?.inc({ outcome }),
              },
            }
          : {}),
      });
      // The answer and the attempt that gave it, in one statement.
      await throughDatabase('store the answer', run.stop.signal, () =>
        deps.executions.putPayload(answerId, input.executionId, 'answer', answer, { attempt }),
      );
      await publish(input.executionId, {
        type: 'done',
        attempt,
        usage: answer.usage,
        ...(answer.incomplete_details ? { incomplete_details: answer.incomplete_details } : {}),
        ...(extra ? { extra } : {}),
      });
      return { answerPayloadId: answerId, usage: answer.usage, attempt };
    } catch (err) {
      // A cancelled execution's background response is cancelled at the provider too (DX-3); an
      // attempt stopped for any other reason leaves it to the retry.
      const cancelled =
        err instanceof CancelledFailure &&
        responseId !== undefined &&
        (run.cause === 'notice' || ctx.cancellationDetails?.cancelRequested === true);
      const cancelling = cancelled ? cancelAtProvider(clients.of(llm), responseId!) : undefined;
      // The record counts the attempts the model was asked in (DX-1); a successful one is counted
      // with its answer.
      await deps.executions.recordAttempt(input.executionId, attempt).catch(() => undefined);
      await cancelling;
      if (err instanceof CancelledFailure && run.cause === 'notice') await run.cancelledByTemporal();
      throw err;
    } finally {
      run.end();
    }
  };
}
