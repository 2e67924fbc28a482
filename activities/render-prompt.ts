// EX-3/EX-4: render-and-validate. Each template is tokenized once and rendered in a single pass
// (inserted text is never scanned again); a sent message that then holds placeholder-form text,
// wherever it came from, fails the execution as a 400 before any trace or model call. The
// rendered messages are stored encrypted; history gets their payload id.
import { ApplicationFailure } from '@temporalio/common';
import { v5 as uuidv5 } from 'uuid';
import type { AgentStore } from '../db/agent-store';
import type { ExecutionStore } from '../db/execution-store';
import type { FragmentStore } from '../db/fragment-store';
import { instantFromDate } from '../domain/dotnet-datetime';
import { fillParts } from '../domain/reference-plan';
import { templateVariableResolver, type AgentTool } from '../domain/system-variables';
import { findPlaceholderLike, render, tokenize } from '../domain/template';
import { chatMessagesOf, type ChatMessage } from '../domain/llm-request';
import { FailureType, type RenderInput } from '../workflows/contracts';
import type { ModelRequestContent } from '../services/answers';
import { slotAnswers, type StoredPlan } from './stored-plan';
import type { ExecutionScratch } from './execution-scratch';
import { checkRenderedSize } from './rendered-limit';
import type { Limits } from '../domain/limits';
import type { AgentRequestContent } from '../services/retrieval';

export interface RenderDeps {
  agents: AgentStore;
  executions: ExecutionStore;
  fragments: FragmentStore;
  limits: Pick<Limits, 'renderedPromptBytes'>;
  /** The request and fragment texts of the steps before, the messages for the model call. */
  scratch: ExecutionScratch;
}

const RENDERED_NAMESPACE = 'c2a4a1d8-7c5e-4e0b-9a57-1d3f6b0e8f42';
export const renderedPayloadId = (executionId: string): string =>
  uuidv5(`${executionId}:rendered`, RENDERED_NAMESPACE);

const gone = (): ApplicationFailure =>
  ApplicationFailure.create({
    type: FailureType.NotFound,
    message: 'The agent or the execution content no longer exists',
    nonRetryable: true,
  });

export function createRenderPrompt(deps: RenderDeps) {
  return async function renderPrompt(input: RenderInput): Promise<{ renderedPayloadId: string }> {
    const [version, request] = await Promise.all([
      deps.agents.getVersion(input.agentId, input.agentVersion),
      deps.scratch.request(input.executionId, () =>
        deps.executions.getPayload<AgentRequestContent>(input.requestPayloadId),
      ),
    ]);
    if (!version || !request) throw gone();
    const inserted = new Map<string, string>(Object.entries(request.values));
    const retrieved = await Promise.all(
      Object.entries(input.retrievals).map(async ([name, refs]) => {
        const ids = refs.map((r) => r.id);
        // This process's retrieval found them (the usual case); else they are read by id.
        const fragments =
          deps.scratch.retrieved(input.executionId, name, ids) ?? (await deps.fragments.byIds(ids));
        return [name, fragments.map((f) => f.page_content).join('\n')] as const;
      }),
    );
    for (const [name, text] of retrieved) inserted.set(name, text);
    // PC-12: references were planned before rendering; EXECUTE slots hold the children's answers.
    const plan = input.planPayloadId
      ? await deps.executions.getPayload<StoredPlan>(input.planPayloadId)
      : null;
    if (input.planPayloadId && !plan) throw gone();
    const answers = plan
      ? await slotAnswers(deps, plan, input.childExecutionIds ?? {})
      : new Map<number, string>();
    // PV-1/PV-2: system variables on the workflow's clock, resolved in the templates only.
    const vars = templateVariableResolver({
      now: instantFromDate(new Date(input.nowMs)),
      tools: version.tools as AgentTool[],
      maxLength: deps.limits.renderedPromptBytes,
    });
    const messages: ChatMessage[] = [];
    for (const [i, message] of version.prompt.entries()) {
      if (!message.include) continue;
      const references = plan?.agent?.[i] ?? {};
      const content = render(tokenize(message.template), {
        placeholder: (name) => inserted.get(name),
        variable: vars.variable,
        prompt: (token) => {
          const parts = references[token.start];
          return parts ? fillParts(parts, (slot) => answers.get(slot) ?? '') : undefined;
        },
      });
      const found = findPlaceholderLike(content);
      if (found) {
        throw ApplicationFailure.create({
          type: FailureType.RenderPlaceholderInValue,
          message: `Rendered prompt contains placeholder-like text: ${found}`,
          nonRetryable: true,
        });
      }
      messages.push({ role: message.role, content });
    }
    checkRenderedSize(messages, deps.limits);
    // OR-3: a /v1/responses conversation follows the rendered messages; its items are no templates.
    const turns = request.responses;
    if (turns) messages.push(...chatMessagesOf([...turns.context, ...turns.input]));
    // PV-6: the record keeps the instant and the names of the variables resolved, no text.
    const id = renderedPayloadId(input.executionId);
    const content: ModelRequestContent = { messages };
    // The rendered messages and the record's details in one statement.
    await deps.executions.putPayload(id, input.executionId, 'rendered', content, {
      variables_instant: new Date(input.nowMs),
      variables_resolved: [...new Set([...vars.resolvedNames(), ...(plan?.variablesResolved ?? [])])],
    });
    deps.scratch.keepRendered(input.executionId, id, messages);
    return { renderedPayloadId: id };
  };
}
