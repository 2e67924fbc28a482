// How executions and saves see the prompt library: the planner's environment for a key (PC-8:
// TEMPLATE needs read, EXECUTE needs execute on each referenced prompt), and the LLMs a prompt
// routes to (PC-10). Shared by the API (save-time checks, §9.2 pre-checks) and the activities.
import type { PromptStore, StoredPrompt } from '../db/prompt-store';
import type { RoutingPolicyStore } from '../db/routing-policy-store';
import type { Limits } from '../domain/limits';
import type { ExecutionMode } from '../domain/prompt-analysis';
import { can, type Principal } from '../domain/permissions';
import { ReferencePlanner, type PlannablePrompt, type PlannerEnv } from '../domain/reference-plan';
import type { VariableToken } from '../domain/template';

export interface PlanningDeps {
  prompts: PromptStore;
  routingPolicies: RoutingPolicyStore;
  /** PC-6: the deepest reference allowed (SPEC §18 chain depth). */
  limits: Pick<Limits, 'chainDepth'>;
}

export function promptAccess(principal: Principal, prompt: StoredPrompt, mode: ExecutionMode): boolean {
  return can(principal, mode === 'EXECUTE' ? 'execute' : 'read', 'prompts', {
    id: prompt.promptId,
    ownerKeyId: prompt.ownerKeyId,
  });
}

/**
 * A planner for `principal`. `onlyDirect` (save time) checks access on the references the saved
 * text holds itself; nested ones were checked when their own prompts were saved.
 */
export function createPlanner(
  deps: PlanningDeps,
  principal: Principal,
  options: {
    onlyDirect?: boolean;
    variable?: (token: VariableToken, forChild: boolean) => string | undefined;
  } = {},
): ReferencePlanner {
  const env: PlannerEnv = {
    maxDepth: deps.limits.chainDepth,
    load: (ids) => deps.prompts.getMany(ids) as Promise<Map<string, PlannablePrompt>>,
    allowed: (prompt, mode, depth) =>
      (options.onlyDirect && depth > 1) || promptAccess(principal, prompt as StoredPrompt, mode),
    variable: options.variable ?? (() => undefined),
  };
  return new ReferencePlanner(env);
}

/** The ordered LLMs of a prompt's routing (PC-10), or [] when it has none. */
export async function routedLlms(
  deps: PlanningDeps,
  prompt: Pick<StoredPrompt, 'routingPolicyId' | 'customGatewayId'>,
): Promise<string[]> {
  if (prompt.customGatewayId) return [prompt.customGatewayId];
  if (prompt.routingPolicyId) return (await deps.routingPolicies.get(prompt.routingPolicyId))?.llms ?? [];
  return [];
}
