// The request limits of SPEC §18 ("defaults, configurable"): their defaults here, the configured
// values read by infra/config.ts (AGENTRY_LIMIT_*) and handed by the composition roots to every
// place that enforces one. Exceeding a limit is a 400 naming it. The body limits, trace TTL,
// content retention and EXECUTE cache TTL of §18 are settings of their own (infra/config.ts).
// Pure.

export interface Limits {
  /** UTF-8 bytes of one template (prompt texts, agent messages, tool router prompts). */
  templateBytes: number;
  /** UTF-8 bytes of a rendered prompt (all messages). */
  renderedPromptBytes: number;
  /** Messages of an agent's prompt. */
  agentMessages: number;
  /** Placeholders of an agent. */
  agentPlaceholders: number;
  /** Largest `k` of a retrieval (agent placeholders, search). */
  k: number;
  /** Characters of one fragment (text splitters' `chunk_size`, the splitter's hard bound). */
  fragmentChars: number;
  /** Nesting depth of a metadata filter. */
  filterDepth: number;
  /** Documents of one batch upload. */
  documentsPerBatch: number;
  /** Depth of the deepest `{{prompt:…}}` reference (PC-6). */
  chainDepth: number;
  /** Steps of a chain. */
  chainSteps: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  templateBytes: 100 * 1024,
  renderedPromptBytes: 2 * 1024 * 1024,
  agentMessages: 50,
  agentPlaceholders: 20,
  k: 100,
  fragmentChars: 8000,
  filterDepth: 8,
  documentsPerBatch: 1000,
  chainDepth: 3,
  chainSteps: 50,
});
