// An agent's stored form (SPEC §8.3): its messages, placeholders (with every retrieval param
// materialised), metadata and tools, the §18 limits it is checked against and the AG-8 defaults.
// Validation is agent-rules.ts.
import type { Limits } from './limits';

export interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  template: string;
  include: boolean;
}
export type SimilarityParams = { k: number; threshold: number | null };
export type MmrParams = { k: number; fetch_k: number; lambda_mult: number; threshold: number | null };
export type Placeholder =
  | { name: string; type: 'query' }
  | { name: string; type: 'similarity'; target: string; params: SimilarityParams }
  | { name: string; type: 'mmr'; target: string; params: MmrParams };
export interface Tool {
  name: string;
  description: string;
  router_prompt?: string;
}
export interface AgentDefinition {
  prompt: PromptMessage[];
  placeholders: Placeholder[];
  metadata: Record<string, Record<string, unknown>>;
  tools: Tool[];
}
/** The SPEC §18 limits an agent is checked against. */
export type AgentLimits = Pick<Limits, 'agentMessages' | 'agentPlaceholders' | 'templateBytes' | 'k'>;

/** AG-8: the defaults of a retrieval placeholder without `params` (SR-2). */
export const DEFAULT_PARAMS = {
  similarity: { k: 5, threshold: null } as SimilarityParams,
  mmr: { k: 5, fetch_k: 10, lambda_mult: 0.5, threshold: null } as MmrParams,
};

/** §8.4: the names of the query placeholders, in placeholder order. */
export function inputVariables(def: AgentDefinition): string[] {
  return def.placeholders.flatMap((ph) => (ph.type === 'query' ? [ph.name] : []));
}
