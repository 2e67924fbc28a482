// PC-5/PC-9: renders a planned prompt execution: the plan's slots filled with the cache hits and
// the children's answers, attachments listed in the user message (CH-2), the SPEC §18 size limit
// checked. For the gateway it also stores the execution chain and reference errors of the
// answer's `done` event. Content goes to `execution_payloads`; history gets payload ids.
import type { ExecutionStore } from '../db/execution-store';
import type { ChatMessage } from '../domain/llm-request';
import { fillParts } from '../domain/reference-plan';
import { FailureType } from '../workflows/contracts';
import type { ModelRequestContent } from '../services/answers';
import { chainPayloadId, derivedId, fail, slotAnswers, type StoredPlan } from './stored-plan';
import { checkRenderedSize } from './rendered-limit';
import type { Limits } from '../domain/limits';

export interface RenderPromptExecutionDeps {
  executions: ExecutionStore;
  limits: Pick<Limits, 'renderedPromptBytes'>;
}

export function createRenderPromptExecution(deps: RenderPromptExecutionDeps) {
  return async function renderPromptExecution(input: {
    executionId: string;
    planPayloadId: string;
    childExecutionIds: Record<number, string>;
    withChain: boolean;
  }): Promise<{ renderedPayloadId: string; chainPayloadId?: string }> {
    const plan = await deps.executions.getPayload<StoredPlan>(input.planPayloadId);
    if (!plan) throw fail(FailureType.NotFound, 'Execution content expired');
    const answers = await slotAnswers(deps, plan, input.childExecutionIds);
    const answer = (slot: number) => answers.get(slot) ?? '';
    const messages: ChatMessage[] = [];
    const system = fillParts(plan.system ?? [], answer);
    if (system !== '') messages.push({ role: 'system', content: system });
    let user = fillParts(plan.user ?? [], answer);
    const attachments = plan.attachments ?? [];
    if (attachments.length > 0) {
      const lines = attachments.map((a) => (a.type === 'url' ? `- url: ${a.url}` : `- file: ${a.fileId}`));
      user = `${user}\n\nAttachments:\n${lines.join('\n')}`;
    }
    const fileUrls = attachments.flatMap((a) => (a.type === 'url' ? [a.url] : []));
    messages.push({ role: 'user', content: user, ...(fileUrls.length > 0 ? { fileUrls } : {}) });
    checkRenderedSize(messages, deps.limits);
    const content: ModelRequestContent = { messages };
    const renderedPayloadId = derivedId(input.executionId, 'rendered');
    await deps.executions.putPayload(renderedPayloadId, input.executionId, 'rendered', content);
    if (!input.withChain) return { renderedPayloadId };
    const executionChain = plan.chain.map((entry) => ({
      promptId: entry.promptId,
      promptName: entry.promptName,
      depth: entry.depth,
      executionMode: entry.executionMode,
      response: entry.slot !== undefined ? answer(entry.slot) : fillParts(entry.injected ?? [], answer),
      cached: entry.slot !== undefined && entry.slot in plan.cached,
    }));
    const referenceErrors = plan.problems.map((p) => ({
      promptId: p.promptId,
      reason: p.reason,
      position: p.position,
    }));
    const id = chainPayloadId(input.executionId);
    await deps.executions.putPayload(id, input.executionId, 'chain', { executionChain, referenceErrors });
    return { renderedPayloadId, chainPayloadId: id };
  };
}
