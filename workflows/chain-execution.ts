// SPEC §13: one workflow per chain execution. Steps run one after another in ascending order; each
// is prepared by an activity (variables, attachments, its record) and runs as a `promptExecution`
// child workflow on its prompt's routing. History holds only ids, statuses, token counts and
// failure descriptions: the context is the answers' payload ids, which activities read.
// stopOnError ends the chain at the first failed step (later ones SKIPPED); the token ceiling
// (CH-4) ends it after the step that passed it. A final activity stores the CH-3 report.
import { executeChild, isCancellation, proxyActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { tasksQueue, withSummaries } from './activity-proxies';
import type { ChainExecutionInput, ChainExecutionResult, ChainStatus, ChainStepOutcome } from './contracts';
import { workflowIdFor, type PromptExecutionInput, type PromptExecutionResult } from './contracts';
import { describeFailure } from './describe-failure';
import { recordFailure } from './execution-outcome';
import { retryPolicy } from './retry-policy';
import { searchAttributePairs } from './search-attributes';
import { workflowMetadata } from './user-metadata';

const hex = (n: number): string => uuid4().replace(/-/g, '').slice(0, n);

/** CH-3: a chain ended by a failed step (stopOnError) or a guardrail is FAILED. */
function chainStatus(outcomes: ChainStepOutcome[], stopped: boolean): ChainStatus {
  if (stopped) return 'FAILED';
  if (!outcomes.some((o) => o.status === 'FAILED')) return 'SUCCESS';
  return outcomes.some((o) => o.status === 'SUCCESS') ? 'PARTIAL' : 'FAILED';
}

export async function chainExecution(input: ChainExecutionInput): Promise<ChainExecutionResult> {
  const { profiles } = input;
  const acts = withSummaries(
    { prepareChainStep: 'prepare chain step', finishChain: 'record chain outcome' },
    (summary) =>
      proxyActivities<Pick<Activities, 'prepareChainStep' | 'finishChain'>>({
        taskQueue: tasksQueue(),
        startToCloseTimeout: profiles.bookkeeping.startToCloseMs * 3,
        retry: retryPolicy(profiles.bookkeeping),
        summary,
      }),
  );
  const startedMs = workflowInfo().startTime.getTime();
  const outcomes: ChainStepOutcome[] = [];
  let stoppedByError = false;
  let guardrail: 'maxTokens' | undefined;
  let tokens = 0;
  try {
    for (const step of input.steps) {
      if (stoppedByError || guardrail) {
        outcomes.push({ ...step, status: 'SKIPPED' });
        continue;
      }
      const stepExecutionId = uuid4();
      const spanId = hex(16);
      const metadata = {
        chainExecutionId: input.executionId,
        chainStep: step.order,
        traceId: input.traceId,
        spanId,
        traceparent: `00-${input.traceId}-${spanId}-01`,
        // CH-2: each step's telemetry is {mode: "full", force: true}.
        telemetry: { mode: 'full', force: true },
      };
      try {
        const { requestPayloadId } = await acts.prepareChainStep({
          chainExecutionId: input.executionId,
          chainId: input.chainId,
          apiKeyId: input.apiKeyId,
          chainRequestPayloadId: input.requestPayloadId,
          order: step.order,
          promptId: step.promptId,
          stepExecutionId,
          completed: outcomes
            .filter((o) => o.status === 'SUCCESS')
            .map((o) => ({ order: o.order, answerPayloadId: o.answerPayloadId! })),
          metadata,
        });
        const childInput: PromptExecutionInput = {
          executionId: stepExecutionId,
          kind: 'chain_step',
          apiKeyId: input.apiKeyId,
          parentExecutionId: input.executionId,
          promptId: step.promptId,
          requestPayloadId,
          depth: 0,
          ancestors: [],
          nowMs: startedMs,
          chainId: input.chainId,
          metadata,
          profiles,
        };
        const result = await executeChild<(i: PromptExecutionInput) => Promise<PromptExecutionResult>>(
          'promptExecution',
          {
            workflowId: workflowIdFor(stepExecutionId),
            args: [childInput],
            // DX-5: the step carries the chain's ChainId and ApiKeyId.
            typedSearchAttributes: searchAttributePairs({ ChainId: input.chainId, ApiKeyId: input.apiKeyId }),
            ...workflowMetadata({
              kind: 'chain_step',
              chain: { id: input.chainId },
              step: step.order,
              prompt: { id: step.promptId },
              parentExecutionId: input.executionId,
            }),
          },
        );
        outcomes.push({
          ...step,
          status: 'SUCCESS',
          executionId: stepExecutionId,
          answerPayloadId: result.answerPayloadId,
          // A step's tokens include its EXECUTE references' (CH-3 sums, CH-4 ceiling).
          usage: result.totalUsage ?? result.usage,
          provider: result.provider,
          model: result.model,
        });
        const stepUsage = result.totalUsage ?? result.usage;
        tokens += stepUsage.input_tokens + stepUsage.output_tokens;
        if (input.maxTokensPerExecution !== undefined && tokens > input.maxTokensPerExecution)
          guardrail = 'maxTokens';
      } catch (err) {
        if (isCancellation(err)) throw err;
        const failure = describeFailure(err);
        outcomes.push({
          ...step,
          status: 'FAILED',
          executionId: stepExecutionId,
          error: failure.detail,
          errorStatus: failure.status,
        });
        if (input.stopOnError) stoppedByError = true;
      }
    }
    return await acts.finishChain({
      chainExecutionId: input.executionId,
      chainId: input.chainId,
      chainRequestPayloadId: input.requestPayloadId,
      steps: outcomes,
      status: chainStatus(outcomes, stoppedByError || guardrail !== undefined),
      ...(guardrail ? { guardrail } : {}),
      // The workflow sandbox's clock: the time of this workflow task, identical on replay.
      elapsedMs: Date.now() - startedMs,
    });
  } catch (err) {
    // Cancelled (DX-3) or a bookkeeping step gave up: the record and re-attached readers learn it.
    await recordFailure(input.executionId, profiles, err);
    throw err;
  }
}
