// Reference checks at the HTTP edge (SPEC §12 PC-7/PC-8, §8.2 AG-10, §9.2): stored prompts answer
// in seed 002's shape, agents in the foundation4 shape. Save time checks access to the references
// a text holds itself; execution checks every reference it would resolve.
import { InvalidInput } from '../domain/errors';
import type { Principal } from '../domain/permissions';
import { referencesIn } from '../domain/prompt-analysis';
import { fatalMessage, type ReferenceProblem } from '../domain/reference-plan';
import { createPlanner, type PlanningDeps } from '../services/prompt-planner';

interface ReferenceCheck {
  problems: ReferenceProblem[];
  /** Distinct prompt ids the texts reference directly. */
  promptIds: string[];
  /** Each root reference that resolved, with the deepest depth reached below it (itself = 1). */
  reached: { promptId: string; field: string; position: number; depth: number }[];
}

export async function findReferenceProblems(
  deps: PlanningDeps,
  principal: Principal,
  texts: Record<string, string | null | undefined>,
  options: { selfId?: string; atExecution?: boolean } = {},
): Promise<ReferenceCheck> {
  const planner = createPlanner(deps, principal, { onlyDirect: !options.atExecution });
  await planner.preload(Object.values(texts));
  for (const [field, text] of Object.entries(texts))
    if (text) planner.resolveReferencesOf(field, text, options.selfId ? [options.selfId] : []);
  const roots = referencesIn(texts).filter((r) => !r.token.error);
  const reached = roots.flatMap((r) => {
    const depth = planner.deepest.get(`${r.field}:${r.position}`);
    return depth === undefined
      ? []
      : [{ promptId: r.token.promptId, field: r.field, position: r.position, depth }];
  });
  return { problems: planner.problems, promptIds: [...new Set(roots.map((r) => r.token.promptId))], reached };
}

/** PC-7: 400 `{"error": "Invalid prompt references", "details": [{promptId, reason, position}]}`. */
export async function checkPromptReferences(
  deps: PlanningDeps,
  principal: Principal,
  texts: Record<string, string | null | undefined>,
  selfId: string,
): Promise<string[]> {
  const { problems, promptIds, reached } = await findReferenceProblems(deps, principal, texts, { selfId });
  // PC-6 upwards: prompts and agents that reference this one put its references deeper (the walk
  // goes a few levels past the configured depth, then counts as too deep).
  const above =
    reached.length > 0 ? await deps.prompts.referencedDepth(selfId, deps.limits.chainDepth + 3) : 0;
  for (const r of reached) {
    if (above + r.depth <= deps.limits.chainDepth) continue;
    problems.push({
      promptId: r.promptId,
      reason: `Maximum chain depth exceeded: ${selfId} is itself referenced at depth ${above}`,
      position: r.position,
      field: r.field,
      fatal: true,
    });
  }
  if (problems.length > 0) {
    // Seed 002 names the referenced prompt at `position`: for a problem found below it (a cycle
    // closing, a depth exceeded further down), the reference of this text that leads there.
    const referenced = new Map(
      referencesIn(texts).map((r) => [`${r.field}:${r.position}`, r.token.promptId]),
    );
    throw new InvalidInput('Invalid prompt references').withDetails(
      problems.map((p) => ({
        promptId: referenced.get(`${p.field}:${p.position}`) ?? p.promptId,
        reason: p.reason,
        position: p.position,
      })),
    );
  }
  return promptIds;
}

/** AG-10 (save) and §9.2 (execution) for agent templates: 400 naming each reference. */
export async function checkAgentReferences(
  deps: PlanningDeps,
  principal: Principal,
  templates: readonly string[],
  atExecution: boolean,
): Promise<string[]> {
  const texts = Object.fromEntries(templates.map((t, i) => [`prompt[${i}].template`, t]));
  const { problems, promptIds } = await findReferenceProblems(deps, principal, texts, { atExecution });
  const fatal = problems.find((p) => p.fatal);
  if (atExecution && fatal) throw new InvalidInput(fatalMessage(fatal));
  if (problems.length > 0) {
    const items = problems.map((p) => ({
      type: 'invalid_reference',
      path: p.field,
      message: p.reason,
      promptId: p.promptId,
      position: p.position,
    }));
    throw new InvalidInput(
      `Invalid prompt references: ${problems.map((p) => `${p.field}: ${p.reason}`).join('; ')}`,
      items,
    );
  }
  return promptIds;
}
