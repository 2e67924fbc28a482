// EX-3/EX-4: render-and-validate. Each template is tokenized once and rendered in a single pass
// (inserted text is never scanned again); a sent message that then holds placeholder-form text,
// wherever it came from, fails the execution as a 400 before any trace or model call. The
// rendered messages are stored encrypted; history gets their payload id.
import { ApplicationFailure } from '@temporalio/common';
import { v5 as uuidv5 } from 'uuid';
import type { AgentStore } from '../db/agent-store';
import type { ExecutionStore } from '../db/execution-store';
import type { FragmentStore } from '../db/fragment-store';
import { findPlaceholderLike, render, tokenize } from '../domain/template';
import type { ChatMessage } from '../domain/llm-request';
import { FailureType, type RenderInput } from '../workflows/contracts';
import type { ModelRequestContent } from './call-model';
import type { AgentRequestContent } from './retrieve-fragments';

export interface RenderDeps {
  agents: AgentStore;
  executions: ExecutionStore;
  fragments: FragmentStore;
}

const RENDERED_NAMESPACE = 'c2a4a1d8-7c5e-4e0b-9a57-1d3f6b0e8f42';
export const renderedPayloadId = (executionId: string): string =>
  uuidv5(`${executionId}:rendered`, RENDERED_NAMESPACE);

export function createRenderPrompt(deps: RenderDeps) {
  return async function renderPrompt(input: RenderInput): Promise<{ renderedPayloadId: string }> {
    const [version, request] = await Promise.all([
      deps.agents.getVersion(input.agentId, input.agentVersion),
      deps.executions.getPayload<AgentRequestContent>(input.requestPayloadId),
    ]);
    if (!version || !request) {
      throw ApplicationFailure.create({
        type: FailureType.NotFound,
        message: 'The agent or the execution content no longer exists',
        nonRetryable: true,
      });
    }
    const inserted = new Map<string, string>(Object.entries(request.values));
    for (const [name, refs] of Object.entries(input.retrievals)) {
      const fragments = await deps.fragments.byIds(refs.map((r) => r.id));
      inserted.set(name, fragments.map((f) => f.page_content).join('\n'));
    }
    const messages: ChatMessage[] = [];
    for (const message of version.prompt) {
      if (!message.include) continue;
      const content = render(tokenize(message.template), { placeholder: (name) => inserted.get(name) });
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
    const id = renderedPayloadId(input.executionId);
    const content: ModelRequestContent = { messages };
    await deps.executions.putPayload(id, input.executionId, 'rendered', content);
    return { renderedPayloadId: id };
  };
}
