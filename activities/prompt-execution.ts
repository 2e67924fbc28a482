// The activities of prompt executions (SPEC §9.3 step 2, §12, §13): planning resolves references
// (TEMPLATE text now, EXECUTE slots for child workflows), variables and routing, and looks up the
// EXECUTE cache; rendering fills the slots with the children's answers; finishing records the
// LLM that answered and caches a reference's answer. Content goes to `execution_payloads`;
// history carries ids, hashes and slot numbers only.
import { ApplicationFailure } from '@temporalio/common';
import { v5 as uuidv5 } from 'uuid';
import type { AgentStore } from '../db/agent-store';
import type { ApiKeyStore } from '../db/api-key-store';
import type { ExecutionStore } from '../db/execution-store';
import type { LlmStore } from '../db/llm-store';
import type { StoredPrompt } from '../db/prompt-store';
import type { ChatMessage } from '../domain/llm-request';
import type { Principal } from '../domain/permissions';
import {
  fatalMessage,
  fillParts,
  type ChainEntry,
  type Part,
  type ReferenceProblem,
} from '../domain/reference-plan';
import { templateVariableResolver, type AgentTool } from '../domain/system-variables';
import { instantFromDate } from '../domain/dotnet-datetime';
import { executeCacheHash, executeCacheKey, type ExecuteCache } from '../infra/execute-cache';
import {
  FailureType,
  ReferenceFailure,
  workflowIdFor,
  type PlanResult,
  type PreparedPromptExecution,
  type PromptExecutionInput,
  type PromptRequestContent,
  type ReferenceChild,
} from '../workflows/contracts';
import { answerPayloadId, type ModelRequestContent, type StoredAnswer } from './call-model';
import { createPlanner, routedLlms, type PlanningDeps } from './prompt-planning';
import { checkRenderedSize } from './rendered-limit';

export interface PromptExecutionDeps extends PlanningDeps {
  agents: AgentStore;
  apiKeys: ApiKeyStore;
  executions: ExecutionStore;
  llms: LlmStore;
  executeCache: ExecuteCache;
  defaultLlmId: string | undefined;
}

/** What planning stores for rendering (content: encrypted in execution_payloads). */
export interface StoredPlan {
  /** Prompt executions: the messages' parts. */
  system?: Part[];
  user?: Part[];
  /** Agent executions: message index → token start → parts of a root reference (null: unresolved). */
  agent?: Record<number, Record<number, Part[] | null>>;
  /** Cache hits: slot → answer text. */
  cached: Record<number, string>;
  chain: ChainEntry[];
  problems: ReferenceProblem[];
  attachments?: PromptRequestContent['attachments'];
  /** PV-6: names of the variables resolved in injected text (the agent's record lists them too). */
  variablesResolved?: string[];
}

const NAMESPACE = '0b7f6a7e-3c1d-4f0a-8f8e-5a4c2d9b1e63';
const derivedId = (executionId: string, what: string): string => uuidv5(`${executionId}:${what}`, NAMESPACE);
export const planPayloadId = (executionId: string): string => derivedId(executionId, 'plan');
export const chainPayloadId = (executionId: string): string => derivedId(executionId, 'chain');
const renderedId = (executionId: string): string => derivedId(executionId, 'rendered');

const fail = (type: string, message: string): ApplicationFailure =>
  ApplicationFailure.create({ type, message, nonRetryable: true });

/** Answers of the plan's slots: cache hits and the children's stored answers. */
export async function slotAnswers(
  deps: Pick<PromptExecutionDeps, 'executions'>,
  plan: StoredPlan,
  childExecutionIds: Record<number, string>,
): Promise<Map<number, string>> {
  const answers = new Map<number, string>(Object.entries(plan.cached).map(([k, v]) => [Number(k), v]));
  for (const [slot, childId] of Object.entries(childExecutionIds)) {
    const stored = await deps.executions.getPayload<StoredAnswer>(answerPayloadId(childId));
    if (!stored) throw fail(FailureType.NotFound, `The answer of reference execution ${childId} expired`);
    answers.set(Number(slot), stored.text);
  }
  return answers;
}

export function createPromptExecutionActivities(deps: PromptExecutionDeps) {
  async function principalOf(apiKeyId: string): Promise<Principal> {
    const key = await deps.apiKeys.findCredentials(apiKeyId);
    if (!key) throw fail(FailureType.NotFound, 'The API key that started the execution no longer exists');
    return { keyId: apiKeyId, permissions: key.permissions };
  }

  async function modelOf(llmId: string): Promise<string> {
    return (await deps.llms.get(llmId))?.model ?? '';
  }

  /**
   * The EXECUTE slots of a plan: cache hits become answers (and `cache` records, PC-11), the
   * others children to run. `fallbackLlmId` is the LLM of slots whose prompt has no routing.
   */
  async function resolveSlots(
    executionId: string,
    apiKeyId: string,
    planner: ReturnType<typeof createPlanner>,
    ancestors: string[],
    fallbackLlmId: string,
  ): Promise<{ cached: Record<number, string>; children: ReferenceChild[] }> {
    const cached: Record<number, string> = {};
    const children: ReferenceChild[] = [];
    for (const slot of planner.slots) {
      // A slot exists only for a prompt the planner loaded.
      const prompt = planner.loaded(slot.promptId)!;
      const llmIds = await routedLlms(deps, prompt);
      const model = await modelOf(llmIds[0] ?? fallbackLlmId);
      const hash = executeCacheHash(JSON.stringify(slot.resolved), model, prompt.temperature);
      const cacheKey = executeCacheKey(slot.promptId, hash, slot.depth);
      const childId = derivedId(executionId, `slot:${slot.slot}`);
      const hit = await deps.executeCache.get(cacheKey);
      if (hit) {
        cached[slot.slot] = hit.text;
        await deps.executions.ensure(
          {
            id: childId,
            kind: 'reference',
            api_key_id: apiKeyId,
            workflow_id: workflowIdFor(childId),
            parent_execution_id: executionId,
            is_internal: true,
            chain_depth: slot.depth,
            referenced_prompt_id: slot.promptId,
          },
          { status: 'succeeded', selected_provider: 'cache' },
        );
        continue;
      }
      children.push({
        slot: slot.slot,
        executionId: childId,
        promptId: slot.promptId,
        depth: slot.depth,
        ancestors: [...ancestors, slot.promptId],
        cacheKey,
        fallbackLlmId,
      });
    }
    return { cached, children };
  }

  async function preparePromptExecution(input: PromptExecutionInput): Promise<PreparedPromptExecution> {
    const { executionId } = input;
    if (input.kind !== 'gateway') {
      await deps.executions.ensure({
        id: executionId,
        kind: input.kind,
        api_key_id: input.apiKeyId,
        workflow_id: workflowIdFor(executionId),
        ...(input.parentExecutionId ? { parent_execution_id: input.parentExecutionId } : {}),
        is_internal: true,
        chain_depth: input.kind === 'reference' ? input.depth : 1,
        ...(input.promptId ? { referenced_prompt_id: input.promptId } : {}),
        ...(input.chainId ? { chain_id: input.chainId } : {}),
        ...(input.metadata ? { metadata: input.metadata } : {}),
      });
    }
    const principal = await principalOf(input.apiKeyId);
    const request = input.requestPayloadId
      ? await deps.executions.getPayload<PromptRequestContent>(input.requestPayloadId)
      : { variables: {} };
    if (!request) throw fail(FailureType.NotFound, 'Execution content expired');
    let prompt: StoredPrompt | null = null;
    if (input.promptId) {
      prompt = await deps.prompts.get(input.promptId);
      if (!prompt) throw fail(ReferenceFailure.Invalid, `Prompt ${input.promptId} not found`);
    }
    if (input.nowMs === undefined) throw fail(FailureType.NotFound, 'The execution clock (nowMs) is missing');
    const now = new Date(input.nowMs);
    // Stored prompts have no tools: the same context renders this prompt and its EXECUTE children.
    const vars = templateVariableResolver({ now: instantFromDate(now), tools: [] });
    const childVars = templateVariableResolver({ now: instantFromDate(now), tools: [] });
    const planner = createPlanner(deps, principal, {
      variable: (token, forChild) => (forChild ? childVars : vars).variable(token),
    });
    const system = prompt?.systemPrompt ?? null;
    const user = prompt ? prompt.userPrompt : (request.text ?? '');
    // Prompt ids from the top down to this prompt (cycle detection, PC-6).
    const path = prompt
      ? input.ancestors.includes(prompt.promptId)
        ? input.ancestors
        : [...input.ancestors, prompt.promptId]
      : request.sourcePromptId
        ? [request.sourcePromptId]
        : [];
    await planner.preload([system, user]);
    const unresolved = new Set<string>();
    const double = (t: { name: string }) => {
      // Own properties only: `{{constructor}}` names a variable, not Object.prototype's member.
      if (Object.hasOwn(request.variables, t.name)) return request.variables[t.name];
      unresolved.add(t.name);
      return undefined;
    };
    const systemParts = system ? planner.resolveText('systemPrompt', system, path, input.depth, double) : [];
    const userParts = planner.resolveText('userPrompt', user, path, input.depth, double);
    const fatal = planner.fatal;
    if (fatal) throw fail(ReferenceFailure.Fatal, fatalMessage(fatal));
    if (unresolved.size > 0)
      throw fail(
        ReferenceFailure.UnresolvedVariables,
        `Unresolved variable(s): ${[...unresolved].join(', ')}`,
      );

    let llmIds = input.llmIds ?? (prompt ? await routedLlms(deps, prompt) : []);
    if (llmIds.length === 0) {
      const fallback = input.fallbackLlmId ?? deps.defaultLlmId;
      if (!fallback)
        throw fail(
          ReferenceFailure.Invalid,
          `No LLM for prompt ${input.promptId ?? '(gateway)'}: it has no routing and AGENTRY_DEFAULT_LLM_ID is not set`,
        );
      llmIds = [fallback];
    }
    const { cached, children } = await resolveSlots(executionId, input.apiKeyId, planner, path, llmIds[0]!);
    const plan: StoredPlan = {
      system: systemParts,
      user: userParts,
      cached,
      chain: planner.chain,
      problems: planner.problems,
      ...(request.attachments ? { attachments: request.attachments } : {}),
    };
    const id = planPayloadId(executionId);
    await deps.executions.putPayload(id, executionId, 'plan', plan);
    await deps.executions.recordDetails(executionId, {
      variables_instant: now,
      variables_resolved: vars.resolvedNames(),
    });
    const temperature = input.temperature ?? prompt?.temperature ?? undefined;
    return { planPayloadId: id, children, llmIds, ...(temperature !== undefined ? { temperature } : {}) };
  }

  /** PC-12: the references of an agent's templates (§9.3 step 2). */
  async function planAgentReferences(input: {
    executionId: string;
    agentId: string;
    agentVersion: number;
    apiKeyId: string;
    llmId: string;
    nowMs: number;
  }): Promise<PlanResult> {
    const version = await deps.agents.getVersion(input.agentId, input.agentVersion);
    if (!version) throw fail(FailureType.NotFound, 'The agent no longer exists');
    const principal = await principalOf(input.apiKeyId);
    const tools = version.tools as AgentTool[];
    const now = instantFromDate(new Date(input.nowMs));
    // Text injected into the agent's messages sees the agent's tools; an EXECUTE child runs a
    // stored prompt on its own, without them (its cache identity must be what it renders).
    const vars = templateVariableResolver({ now, tools });
    const childVars = templateVariableResolver({ now, tools: [] });
    const planner = createPlanner(deps, principal, {
      variable: (token, forChild) => (forChild ? childVars : vars).variable(token),
    });
    await planner.preload(version.prompt.map((m) => m.template));
    const agent: Record<number, Record<number, Part[] | null>> = {};
    version.prompt.forEach((message, i) => {
      if (!message.include) return;
      const resolved = planner.resolveReferencesOf(`prompt[${i}].template`, message.template, []);
      agent[i] = Object.fromEntries([...resolved].map(([start, parts]) => [start, parts ?? null]));
    });
    const fatal = planner.fatal;
    if (fatal) throw fail(ReferenceFailure.Fatal, fatalMessage(fatal));
    if (planner.problems.length > 0) {
      const list = planner.problems.map((p) => `${p.field}: ${p.reason}`).join('; ');
      throw fail(ReferenceFailure.Invalid, `Invalid prompt references: ${list}`);
    }
    const { cached, children } = await resolveSlots(
      input.executionId,
      input.apiKeyId,
      planner,
      [],
      input.llmId,
    );
    const plan: StoredPlan = {
      agent,
      cached,
      chain: planner.chain,
      problems: [],
      variablesResolved: vars.resolvedNames(),
    };
    const id = planPayloadId(input.executionId);
    await deps.executions.putPayload(id, input.executionId, 'plan', plan);
    return { planPayloadId: id, children };
  }

  async function renderPromptExecution(input: {
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
    checkRenderedSize(messages);
    const content: ModelRequestContent = { messages };
    const renderedPayloadId = renderedId(input.executionId);
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
  }

  /** Records the LLM that answered (PC-10/PC-11) and caches a reference's answer (PC-5). */
  async function finishPromptExecution(input: {
    executionId: string;
    llmId: string;
    answerPayloadId: string;
    cacheKey?: string;
  }): Promise<{ provider: string; model: string }> {
    const llm = await deps.llms.get(input.llmId);
    const provider = llm?.provider ?? 'unknown';
    const model = llm?.model ?? 'unknown';
    await deps.executions.recordDetails(input.executionId, {
      llm_id: input.llmId,
      selected_provider: provider,
    });
    if (input.cacheKey) {
      const stored = await deps.executions.getPayload<StoredAnswer>(input.answerPayloadId);
      if (stored)
        await deps.executeCache.set(input.cacheKey, {
          text: stored.text,
          usage: stored.usage,
          provider,
          model,
        });
    }
    return { provider, model };
  }

  return {
    preparePromptExecution,
    planAgentReferences,
    renderPromptExecution,
    finishPromptExecution,
  };
}
