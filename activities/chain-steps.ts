// The chain workflow's activities (SPEC §13): prepare a step (its variables from the context and
// the inputs, its attachments, its execution record and request payload) and finish the chain
// (the CH-3 report stored as the chain execution's answer, the record's outcome, the relay's
// terminal event). Both may run twice: ids are deterministic and writes idempotent.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { v5 as uuidv5 } from 'uuid';
import type { ExecutionStore } from '../db/execution-store';
import { chainContext, stepAttachments, stepVariables } from '../domain/chain-run';
import type { Relay } from '../infra/relay';
import {
  CHAIN_GUARDRAIL_MESSAGE,
  ChainFailure,
  type ChainExecutionResult,
  type ChainReport,
  type ChainRequestContent,
  type FinishChainInput,
  type PrepareChainStepInput,
  type StoredChainAnswer,
  FailureType,
  ReferenceFailure,
  workflowIdFor,
  type PromptRequestContent,
} from '../workflows/contracts';
import { answerPayloadId, type StoredAnswer } from '../services/answers';

export interface ChainStepDeps {
  executions: ExecutionStore;
  relay: Relay;
  contentRetentionSeconds: number;
}

const REQUEST_NAMESPACE = '0b8e4f4e-2d0c-4a51-9d1e-5c7c1f7a3b20';
const stepRequestPayloadId = (stepExecutionId: string): string =>
  uuidv5(`${stepExecutionId}:request`, REQUEST_NAMESPACE);

const expired = (): ApplicationFailure =>
  ApplicationFailure.create({
    type: FailureType.NotFound,
    message: 'Execution content expired',
    nonRetryable: true,
  });

export function createChainSteps(deps: ChainStepDeps) {
  const requestOf = async (payloadId: string): Promise<ChainRequestContent> => {
    const request = await deps.executions.getPayload<ChainRequestContent>(payloadId);
    if (!request) throw expired();
    return request;
  };
  const answersOf = async (steps: { order: number; answerPayloadId: string }[]) =>
    Promise.all(
      steps.map(async ({ order, answerPayloadId: id }) => {
        const answer = await deps.executions.getPayload<StoredAnswer>(id);
        if (!answer) throw expired();
        return { order, text: answer.text };
      }),
    );

  return {
    /**
     * CH-2, CH-5: writes the step's record (an internal execution of the chain) and its request
     * {variables, attachments}; the step fails with `Unresolved variable(s): ...` when a template
     * of its `variables` names something neither the context nor the inputs hold.
     */
    async prepareChainStep(input: PrepareChainStepInput): Promise<{ requestPayloadId: string }> {
      const request = await requestOf(input.chainRequestPayloadId);
      const step = request.steps.find((s) => s.order === input.order);
      if (!step) throw expired();
      const context = chainContext(request.steps, await answersOf(input.completed));
      const { variables, unresolved } = stepVariables(step.variables ?? {}, context, request.inputs);
      const content: PromptRequestContent = {
        variables,
        attachments: stepAttachments(request.attachments, request.stepAttachments[String(input.order)]),
      };
      const requestPayloadId = stepRequestPayloadId(input.stepExecutionId);
      const created = await deps.executions.get(input.stepExecutionId);
      if (!created) {
        await deps.executions
          .create(
            {
              id: input.stepExecutionId,
              kind: 'chain_step',
              api_key_id: input.apiKeyId,
              workflow_id: workflowIdFor(input.stepExecutionId),
              is_internal: true,
              parent_execution_id: input.chainExecutionId,
              chain_id: input.chainId,
              chain_depth: 1,
              referenced_prompt_id: input.promptId,
              metadata: input.metadata,
            },
            { payloadId: requestPayloadId, content },
          )
          .catch((err: unknown) => {
            // A concurrent attempt wrote it first.
            if ((err as { code?: string }).code !== '23505') throw err;
          });
      }
      if (unresolved.length > 0) {
        await deps.executions.finish(
          input.stepExecutionId,
          { status: 'failed', error: { status: 400, type: ReferenceFailure.UnresolvedVariables } },
          deps.contentRetentionSeconds,
        );
        throw ApplicationFailure.create({
          type: ReferenceFailure.UnresolvedVariables,
          message: `Unresolved variable(s): ${unresolved.join(', ')}`,
          nonRetryable: true,
        });
      }
      return { requestPayloadId };
    },

    /** CH-3: the report as the chain execution's answer; the record and the relay learn the end. */
    async finishChain(input: FinishChainInput): Promise<ChainExecutionResult> {
      const request = await requestOf(input.chainRequestPayloadId);
      const succeeded = input.steps.filter((s) => s.status === 'SUCCESS' && s.answerPayloadId);
      const answers = await answersOf(
        succeeded.map((s) => ({ order: s.order, answerPayloadId: s.answerPayloadId! })),
      );
      const report = chainReport(input, request, answers);
      const usage = {
        input_tokens: report.tokens.promptTokens,
        output_tokens: report.tokens.completionTokens,
      };
      const answerId = answerPayloadId(input.chainExecutionId);
      const stored: StoredChainAnswer = { text: JSON.stringify(report), usage, report };
      await deps.executions.putPayload(answerId, input.chainExecutionId, 'answer', stored);

      const failedStep = input.steps.find((s) => s.status === 'FAILED');
      const failure = input.guardrail
        ? {
            status: 429,
            type: ChainFailure.GuardrailViolation,
            detail: `${CHAIN_GUARDRAIL_MESSAGE}: maxTokens`,
          }
        : input.status === 'FAILED'
          ? {
              status: failedStep?.errorStatus ?? 502,
              type: ChainFailure.StepFailed,
              detail: `Chain failed at step ${failedStep?.order} (${failedStep?.promptId}): ${failedStep?.error}`,
            }
          : undefined;
      await deps.executions.finish(
        input.chainExecutionId,
        failure
          ? { status: 'failed', usage, error: { status: failure.status, type: failure.type } }
          : { status: 'succeeded', usage },
        deps.contentRetentionSeconds,
      );
      // DX-2: a reader re-attached to the chain gets the report as its text, or the failure.
      const attempt = Context.current().info.attempt;
      if (failure) {
        await deps.relay.publish(input.chainExecutionId, {
          type: 'error',
          status: failure.status,
          detail: failure.detail,
        });
      } else {
        await deps.relay.publish(input.chainExecutionId, { type: 'start', attempt });
        await deps.relay.publish(input.chainExecutionId, { type: 'delta', attempt, text: stored.text });
        await deps.relay.publish(input.chainExecutionId, { type: 'done', attempt, usage });
      }
      return {
        answerPayloadId: answerId,
        usage,
        status: input.status,
        ...(input.guardrail ? { guardrail: input.guardrail } : {}),
      };
    },
  };
}

function chainReport(
  input: FinishChainInput,
  request: ChainRequestContent,
  answers: { order: number; text: string }[],
): ChainReport {
  const answerOf = (order: number) => answers.find((a) => a.order === order)?.text ?? null;
  const steps = input.steps.map((o) => ({
    order: o.order,
    promptId: o.promptId,
    status: o.status,
    providerName: o.provider ?? null,
    providerModel: o.model ?? null,
    response: o.status === 'SUCCESS' ? answerOf(o.order) : null,
    usage: { promptTokens: o.usage?.input_tokens ?? 0, completionTokens: o.usage?.output_tokens ?? 0 },
    ...(o.error !== undefined ? { error: o.error } : {}),
  }));
  const promptTokens = steps.reduce((sum, s) => sum + s.usage.promptTokens, 0);
  const completionTokens = steps.reduce((sum, s) => sum + s.usage.completionTokens, 0);
  const errors = input.steps
    .filter((o) => o.status === 'FAILED')
    .map((o) => ({ order: o.order, promptId: o.promptId, error: o.error ?? 'Step failed' }));
  if (input.guardrail) {
    const last = [...input.steps].reverse().find((s) => s.status === 'SUCCESS')!;
    errors.push({
      order: last.order,
      promptId: last.promptId,
      error: `${CHAIN_GUARDRAIL_MESSAGE}: maxTokens (${promptTokens + completionTokens} tokens exceed maxTokensPerExecution)`,
    });
  }
  return {
    chainId: input.chainId,
    chainExecutionId: input.chainExecutionId,
    status: input.status,
    steps,
    context: chainContext(request.steps, answers),
    tokens: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens },
    errors,
    elapsedMs: input.elapsedMs,
  };
}
