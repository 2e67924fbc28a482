// What planning stores for rendering (SPEC §12 PC-5): the plan of a prompt or an agent's
// references, its payload ids (derived from the execution id, so a retried step writes the same
// rows), and the answers of its EXECUTE slots. Written by the planning activities, read by the
// rendering ones; content lives encrypted in `execution_payloads`, history carries ids only.
import { ApplicationFailure } from '@temporalio/common';
import { v5 as uuidv5 } from 'uuid';
import type { ExecutionStore } from '../db/execution-store';
import type { ChainEntry, Part, ReferenceProblem } from '../domain/reference-plan';
import { FailureType, type PromptRequestContent } from '../workflows/contracts';
import { answerPayloadId, type StoredAnswer } from '../services/answers';

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
/** A deterministic id for `what` of an execution: its plan, chain, rendered messages or a slot's child. */
export const derivedId = (executionId: string, what: string): string =>
  uuidv5(`${executionId}:${what}`, NAMESPACE);
export const planPayloadId = (executionId: string): string => derivedId(executionId, 'plan');
export const chainPayloadId = (executionId: string): string => derivedId(executionId, 'chain');

/** A failure no retry can mend: a missing record or an invalid reference. */
export const fail = (type: string, message: string): ApplicationFailure =>
  ApplicationFailure.create({ type, message, nonRetryable: true });

/** Answers of the plan's slots: cache hits and the children's stored answers. */
export async function slotAnswers(
  deps: { executions: ExecutionStore },
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
