// The LLM activity (SPEC §7, §9.6): one streamed Responses API call per attempt. Publishes
// `start` once the model answered 200, each delta tagged with the attempt, and `done` after the
// answer is stored. Heartbeats every second so cancellation arrives quickly; a separate
// no-progress timer fails a silent stream as `Llm.Stalled`. The client never retries by itself.
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { v5 as uuidv5 } from 'uuid';
import type { LlmStore } from '../db/llm-store';
import type { ExecutionStore } from '../db/execution-store';
import type { IdempotencyStore } from '../infra/idempotency-store';
import { toResponsesRequest, type ChatMessage } from '../domain/llm-request';
import { closingEvents, type RelayEvent } from '../domain/stream-events';
import { isDatabaseConnectionLost } from '../infra/connection-errors';
import { ModelClients } from '../infra/model-clients';
import { RELAY_START, type Relay } from '../infra/relay';
import { FailureType, type CallModelInput, type CallModelResult, type Usage } from '../workflows/contracts';
import { DeltaBatcher } from './delta-batcher';
import { ModelStreamClaim } from './model-stream-claim';
import { classifyModelError } from './failures';

export interface CallModelDeps {
  llms: LlmStore;
  executions: ExecutionStore;
  relay: Relay;
  /** Which attempt streams each execution's answer (activities/model-stream-claim.ts). */
  modelStreams: IdempotencyStore;
}

/** The stored answer of an execution. */
export interface StoredAnswer {
  text: string;
  usage: Usage;
}

/** Stored request content of a direct query or a rendered agent prompt. */
export interface ModelRequestContent {
  messages: ChatMessage[];
}

const ANSWER_NAMESPACE = '6f1f3c52-8a7e-4b8e-9d55-2f2b7f0c9a11';
export const answerPayloadId = (executionId: string): string =>
  uuidv5(`${executionId}:answer`, ANSWER_NAMESPACE);

const HEARTBEAT_MS = 1000;
/** How long an attempt Temporal gave up on asks whether it will be retried. */
const RETRY_LOOKUP_MS = 5000;
/**
 * How long an attempt repeats a statement that lost its PostgreSQL connection (a dropped
 * connection, a restart, a failover), and the pauses between tries: failing the attempt instead
 * would, once the model is asked, ask it again (issue 16, docs/decisions.md).
 */
const STORE_FOR_MS = 30_000;
const STORE_PAUSES_MS = [100, 250, 500, 1000, 2000];

/**
 * `statement`, repeated while its database connection is lost, for up to STORE_FOR_MS (the
 * activity heartbeats meanwhile); then, or at once for any other error, an `Infra.Unavailable`
 * failure naming only the error's code (the driver's message carries the statement and its
 * values). Never classified as the model's failure. Stops when the attempt is cancelled or timed
 * out (`signal`): a late write must not replace a newer attempt's.
 */
async function throughDatabase<T>(
  what: string,
  signal: AbortSignal,
  statement: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + STORE_FOR_MS;
  for (let tries = 0; ; tries++) {
    signal.throwIfAborted();
    try {
      return await statement();
    } catch (err) {
      if (signal.aborted) throw err;
      if (!isDatabaseConnectionLost(err) || Date.now() >= deadline) {
        const { code, name } = (err ?? {}) as { code?: unknown; name?: unknown };
        throw ApplicationFailure.create({
          type: FailureType.InfraUnavailable,
          message: `Could not ${what} (${String(code ?? name ?? 'error')})`,
        });
      }
      await sleep(STORE_PAUSES_MS[Math.min(tries, STORE_PAUSES_MS.length - 1)]!, undefined, { signal });
    }
  }
}

/**
 * Whether Temporal has scheduled the next attempt of this activity: the attempt was "not found"
 * because it timed out (its heartbeats did not arrive), not because the execution was cancelled or
 * closed, which the server reports the same way once the workflow has ended. Asked on a fresh
 * signal: the activity's own is aborted by then. Unknown counts as no.
 */
async function retryScheduled(ctx: Context): Promise<boolean> {
  try {
    const { client, info } = ctx;
    if (!info.workflowExecution) return false;
    const { workflowId, runId } = info.workflowExecution;
    const description = await client.withAbortSignal(AbortSignal.timeout(RETRY_LOOKUP_MS), () =>
      client.workflow.getHandle(workflowId, runId).describe(),
    );
    return (
      description.status.name === 'RUNNING' &&
      (description.raw.pendingActivities ?? []).some(
        (a) => a.activityId === info.activityId && (a.attempt ?? 0) > info.attempt,
      )
    );
  } catch {
    return false;
  }
}

export function createCallModel(deps: CallModelDeps) {
  const clients = new ModelClients();
  const publish = async (executionId: string, event: RelayEvent): Promise<void> => {
    try {
      await deps.relay.publish(executionId, event);
    } catch {
      throw ApplicationFailure.create({ type: FailureType.InfraUnavailable, message: 'Relay unavailable' });
    }
  };

  return async function callModel(input: CallModelInput): Promise<CallModelResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt + (input.attemptOffset ?? 0);
    const answerId = answerPayloadId(input.executionId);
    // An earlier attempt stored the answer but its completion was lost (its worker died after
    // storing it): never pay the model twice.
    // Every read before the model call at once: one round trip's wait instead of four.
    const [stored, extra, llm, request] = await throughDatabase(
      'read the request',
      ctx.cancellationSignal,
      () =>
        Promise.all([
          deps.executions.getPayload<StoredAnswer>(answerId),
          input.doneExtraPayloadId
            ? deps.executions.getPayload<Record<string, unknown>>(input.doneExtraPayloadId)
            : null,
          deps.llms.getForCall(input.llmId),
          deps.executions.getPayload<ModelRequestContent>(input.requestPayloadId),
        ]),
    );
    const done = (usage: Usage): RelayEvent => ({
      type: 'done',
      attempt,
      usage,
      ...(extra ? { extra } : {}),
    });
    const answered = async (usage: Usage): Promise<CallModelResult> => {
      await publish(input.executionId, done(usage));
      return { answerPayloadId: answerId, usage, attempt };
    };
    /**
     * An earlier attempt stored the answer but did not complete: end the stream from what the
     * relay holds, so that readers keep the text they have (domain/stream-events.ts).
     */
    const answeredBefore = async (answer: StoredAnswer): Promise<CallModelResult> => {
      let log: RelayEvent[];
      try {
        log = (await deps.relay.read(input.executionId, RELAY_START, 0)).map((entry) => entry.event);
      } catch {
        throw ApplicationFailure.create({ type: FailureType.InfraUnavailable, message: 'Relay unavailable' });
      }
      for (const event of closingEvents(log, answer, attempt, extra ?? undefined))
        await publish(input.executionId, event);
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

    // Temporal giving up on this attempt because its heartbeats did not reach the server (an
    // outage, a partition) is no reason to drop a live stream: it goes on to the end while the
    // retry waits for it (activities/model-stream-claim.ts). Whatever else ends the attempt (the
    // execution cancelled or closed, the worker shutting down, its start-to-close timeout) stops
    // it, and so does losing the claim.
    const startedAt = Date.now();
    const stop = new AbortController();
    const onCancel = (): void => {
      const details = ctx.cancellationDetails;
      const overran = Date.now() - startedAt >= ctx.info.startToCloseTimeoutMs - HEARTBEAT_MS;
      if (!(details?.notFound || details?.timedOut) || overran) stop.abort();
      else void retryScheduled(ctx).then((retried) => retried || stop.abort());
    };
    ctx.cancellationSignal.addEventListener('abort', onCancel);
    if (ctx.cancellationSignal.aborted) onCancel();
    const claim = new ModelStreamClaim(deps.modelStreams, input.executionId, attempt);
    let holding = false;
    const beat = (): void => {
      if (!ctx.cancellationSignal.aborted) ctx.heartbeat({ attempt });
      if (holding) void claim.renew().then((held) => held || stop.abort());
    };
    /** One streamed call: deltas to the relay, then the answer stored and `done` published. */
    const askModel = async (): Promise<CallModelResult> => {
      const abort = new AbortController();
      const onStop = (): void => abort.abort();
      stop.signal.addEventListener('abort', onStop);
      let stalled = false;
      let progressTimer: NodeJS.Timeout | undefined;
      const armProgressTimer = (): void => {
        clearTimeout(progressTimer);
        progressTimer = setTimeout(() => {
          stalled = true;
          abort.abort();
        }, input.noProgressMs);
      };
      // Waiting for our own relay (Redis restarting, §9.6) is not the model being silent.
      const relay = async (event: RelayEvent): Promise<void> => {
        clearTimeout(progressTimer);
        await publish(input.executionId, event);
        armProgressTimer();
      };
      // The attempt is recorded while the model is asked, not before: it is awaited before the
      // answer counts, so a record that cannot be written still fails (and retries) the attempt.
      const attemptRecorded = throughDatabase('store the attempt number', stop.signal, () =>
        deps.executions.recordAttempt(input.executionId, attempt),
      );
      const deltas = new DeltaBatcher(attempt, (event) => publish(input.executionId, event));
      attemptRecorded.catch(() => undefined);
      try {
        const client = clients.get(llm.endpoint, llm.apiKey);
        armProgressTimer();
        const stream = await client.responses.create(
          { model: llm.model, ...toResponsesRequest(request.messages, input.temperature), stream: true },
          { signal: abort.signal },
        );
        await relay({ type: 'start', attempt });
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
            throw ApplicationFailure.create({
              type: FailureType.LlmRejected,
              message: `Model stopped before completing: ${event.response.incomplete_details?.reason ?? 'unknown reason'}`,
              details: [{ message: `incomplete: ${event.response.incomplete_details?.reason ?? 'unknown'}` }],
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
        await attemptRecorded;
        const answer: StoredAnswer = { text, usage };
        await throughDatabase('store the answer', stop.signal, () =>
          deps.executions.putPayload(answerId, input.executionId, 'answer', answer),
        );
        return await answered(usage);
      } catch (err) {
        if (stop.signal.aborted) throw new CancelledFailure('Model call cancelled');
        if (stalled) {
          throw ApplicationFailure.create({
            type: FailureType.LlmStalled,
            message: `No progress from the model for ${input.noProgressMs} ms`,
            details: [{ message: `no progress for ${input.noProgressMs} ms` }],
          });
        }
        throw classifyModelError(err);
      } finally {
        // Deltas received before a failure are out before the attempt reports it.
        await deltas.settled();
        clearTimeout(progressTimer);
        stop.signal.removeEventListener('abort', onStop);
      }
    };
    const heartbeat = setInterval(beat, HEARTBEAT_MS);
    beat();
    try {
      // A first attempt asks the model at once (no Redis round trip before the first token).
      let waited = false;
      if (ctx.info.attempt === 1 && !input.attemptOffset) claim.hold();
      else
        ({ waited } = await claim.acquire(
          ctx.cancellationSignal,
          () => ctx.cancellationDetails?.cancelRequested === true,
        ));
      holding = true;
      if (waited) {
        // The attempt that streamed meanwhile may have stored the answer: never pay twice.
        const answer = await throughDatabase('read the answer', stop.signal, () =>
          deps.executions.getPayload<StoredAnswer>(answerId),
        );
        if (answer) return await answeredBefore(answer);
      }
      return await askModel();
    } finally {
      clearInterval(heartbeat);
      ctx.cancellationSignal.removeEventListener('abort', onCancel);
      // Not awaited: the activity completes without the round trip; a waiting retry sees it soon.
      void claim.release();
    }
  };
}
