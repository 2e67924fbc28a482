// PC-12 (SPEC §9.3 step 2): the {{prompt:...}} references of an agent's templates, planned as the
// key that started the execution: text injected into the agent's messages sees the agent's
// tools; EXECUTE references become slots (cache hits, or children for the workflow). The plan
// is stored for `renderPrompt`; history gets its payload id and the children.
import type { AgentStore } from '../db/agent-store';
import { instantFromDate } from '../domain/dotnet-datetime';
import { fatalMessage, type Part } from '../domain/reference-plan';
import { templateVariableResolver, type AgentTool } from '../domain/system-variables';
import { FailureType, ReferenceFailure, type PlanResult } from '../workflows/contracts';
import { createPlanner } from '../services/prompt-planner';
import { fail, planPayloadId, type StoredPlan } from './stored-plan';
import { principalOf, resolveSlots, type ReferenceSlotDeps } from './reference-slots';

export interface PlanAgentReferencesDeps extends ReferenceSlotDeps {
  agents: AgentStore;
}

export function createPlanAgentReferences(deps: PlanAgentReferencesDeps) {
  return async function planAgentReferences(input: {
    executionId: string;
    agentId: string;
    agentVersion: number;
    apiKeyId: string;
    llmId: string;
    nowMs: number;
  }): Promise<PlanResult> {
    const version = await deps.agents.getVersion(input.agentId, input.agentVersion);
    if (!version) throw fail(FailureType.NotFound, 'The agent no longer exists');
    const principal = await principalOf(deps, input.apiKeyId);
    const tools = version.tools as AgentTool[];
    const now = instantFromDate(new Date(input.nowMs));
    // Text injected into the agent's messages sees the agent's tools; an EXECUTE child runs a
    // stored prompt on its own, without them (its cache identity must be what it renders).
    const maxLength = deps.limits.renderedPromptBytes;
    const vars = templateVariableResolver({ now, tools, maxLength });
    const childVars = templateVariableResolver({ now, tools: [], maxLength });
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
      deps,
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
  };
}
