// Resolution of `{{prompt:id}}` references (SPEC §12 PC-3..PC-8, §9.3 step 2), shared by the
// save-time check of prompts and agents and by the planning activity of executions.
//
// A reference in the root text has depth 1; the references of the prompt it names have depth 2,
// and so on. A TEMPLATE reference is replaced by the referenced prompt's `userPrompt` with its
// own references and system variables resolved (recursively); an EXECUTE reference becomes a
// slot that the workflow fills with the answer of a child workflow. Subtrees of EXECUTE
// references are walked too (for depth, cycles and the cache key), but their slots belong to the
// child that will run them. Depth and cycle problems are fatal (PC-6); the others are reference
// errors that leave the reference's text unresolved (PC-9).
import { analyzeEmbeddability, effectiveMode, executionModeOf } from './prompt-analysis';
import type { ExecutionMode, PromptDefinition } from './prompt-analysis';
import { tokenText, tokenize, type DoubleToken, type PromptToken, type VariableToken } from './template';

export interface PlannablePrompt extends PromptDefinition {
  promptId: string;
  name: string;
}

/** Text with holes for EXECUTE answers. */
export type Part = string | { slot: number };

interface Slot {
  slot: number;
  promptId: string;
  depth: number;
  /** The referenced prompt's text as resolved here (nested slots as markers): its cache identity. */
  resolved: { system: Part[]; user: Part[] };
}

export interface ChainEntry {
  promptId: string;
  promptName: string;
  depth: number;
  executionMode: ExecutionMode;
  /** The answer's slot (EXECUTE) or the injected text (TEMPLATE). */
  slot?: number;
  injected?: Part[];
}

export interface ReferenceProblem {
  promptId: string;
  reason: string;
  /** Offset of the root-level reference, in the field that holds it (PC-7). */
  position: number;
  field: string;
  fatal: boolean;
}

export interface PlannerEnv {
  /** PC-6: depth of the deepest reference allowed (SPEC §18 chain depth, configured). */
  maxDepth: number;
  load(promptIds: readonly string[]): Promise<Map<string, PlannablePrompt>>;
  /** PC-8: may the executing key use this prompt in this mode (read for TEMPLATE, execute for EXECUTE)? */
  allowed(prompt: PlannablePrompt, mode: ExecutionMode, depth: number): boolean;
  /**
   * `{{foundationallm:...}}` value, or undefined to leave the token as it is. `forChild`: the
   * text belongs to an EXECUTE subtree, which a child execution renders in its own context.
   */
  variable(token: VariableToken, forChild: boolean): string | undefined;
}

interface Origin {
  field: string;
  position: number;
}

export class ReferencePlanner {
  readonly slots: Slot[] = [];
  readonly chain: ChainEntry[] = [];
  readonly problems: ReferenceProblem[] = [];
  private readonly cache = new Map<string, PlannablePrompt | null>();

  constructor(private readonly env: PlannerEnv) {}

  /** A prompt loaded by `preload` (the one a slot or chain entry names). */
  loaded(promptId: string): PlannablePrompt | undefined {
    return this.cache.get(promptId) ?? undefined;
  }

  get fatal(): ReferenceProblem | undefined {
    return this.problems.find((p) => p.fatal);
  }

  /** Loads every prompt reachable from the texts (breadth first), so resolution is synchronous. */
  async preload(texts: readonly (string | null | undefined)[]): Promise<void> {
    let pending = idsIn(texts).filter((id) => !this.cache.has(id));
    for (let level = 0; pending.length > 0 && level <= this.env.maxDepth + 1; level++) {
      const loaded = await this.env.load(pending);
      const next: string[] = [];
      for (const id of pending) {
        const prompt = loaded.get(id) ?? null;
        this.cache.set(id, prompt);
        if (prompt) next.push(...idsIn([prompt.systemPrompt, prompt.userPrompt]));
      }
      pending = [...new Set(next)].filter((id) => !this.cache.has(id));
    }
  }

  /**
   * The root references of one field: token start → its resolution (undefined when it stays
   * unresolved). `path` holds the prompt ids above the root (cycle detection).
   */
  resolveReferencesOf(
    field: string,
    text: string,
    path: readonly string[],
    baseDepth = 0,
  ): Map<number, Part[] | undefined> {
    const out = new Map<number, Part[] | undefined>();
    for (const token of tokenize(text)) {
      if (token.kind !== 'prompt') continue;
      out.set(
        token.start,
        this.reference(token, baseDepth + 1, path, { field, position: token.start }, true),
      );
    }
    return out;
  }

  /**
   * A whole text with every token resolved: references, system variables and `{{name}}` runtime
   * variables (`double`; undefined leaves the token as written).
   */
  resolveText(
    field: string,
    text: string,
    path: readonly string[],
    baseDepth: number,
    double?: (token: DoubleToken) => string | undefined,
  ): Part[] {
    return this.text(text, baseDepth, path, (t) => ({ field, position: t.start }), true, double);
  }

  private text(
    text: string,
    baseDepth: number,
    path: readonly string[],
    origin: (token: PromptToken) => Origin,
    ownSlots: boolean,
    double?: (token: DoubleToken) => string | undefined,
  ): Part[] {
    const parts: Part[] = [];
    for (const token of tokenize(text)) {
      if (token.kind === 'prompt') {
        const resolved = this.reference(token, baseDepth + 1, path, origin(token), ownSlots);
        parts.push(...(resolved ?? [token.raw]));
      } else if (token.kind === 'variable') parts.push(this.env.variable(token, !ownSlots) ?? token.raw);
      else if (token.kind === 'double') parts.push(double?.(token) ?? token.raw);
      else parts.push(tokenText(token));
    }
    return merge(parts);
  }

  /** Deepest reference depth reached below each root reference (`field:position`). */
  readonly deepest = new Map<string, number>();

  private reached(origin: Origin, depth: number): void {
    const key = `${origin.field}:${origin.position}`;
    this.deepest.set(key, Math.max(this.deepest.get(key) ?? 0, depth));
  }

  private problem(origin: Origin, promptId: string, reason: string, fatal = false): undefined {
    this.problems.push({ promptId, reason, position: origin.position, field: origin.field, fatal });
    return undefined;
  }

  private reference(
    token: PromptToken,
    depth: number,
    path: readonly string[],
    origin: Origin,
    ownSlots: boolean,
  ): Part[] | undefined {
    if (token.error) return this.problem(origin, token.promptId, token.error);
    const id = token.promptId;
    if (path.includes(id)) {
      const cycle = [...path.slice(path.indexOf(id)), id].join(' → ');
      return this.problem(origin, id, `Circular reference: ${cycle}`, true);
    }
    if (depth > this.env.maxDepth) return this.problem(origin, id, 'Maximum chain depth exceeded', true);
    const prompt = this.cache.get(id);
    const notFound = `Prompt ${id} not found`;
    if (!prompt) return this.problem(origin, id, notFound);
    const mode = effectiveMode(token.mode, executionModeOf(prompt));
    if (!this.env.allowed(prompt, mode, depth)) return this.problem(origin, id, notFound);
    const analysis = analyzeEmbeddability(prompt);
    if (!analysis.isEmbeddable)
      return this.problem(origin, id, `Prompt is not embeddable: ${analysis.blockedReason}`);
    const inner = [...path, id];
    const nested = (text: string | null, ownNested: boolean): Part[] =>
      text ? this.text(text, depth, inner, () => origin, ownNested) : [];
    this.reached(origin, depth);
    // The entry is listed before what it contains (executionChain reads top-down).
    const entry: ChainEntry = { promptId: id, promptName: prompt.name, depth, executionMode: mode };
    if (ownSlots) this.chain.push(entry);
    if (mode === 'TEMPLATE') {
      const injected = nested(prompt.userPrompt, ownSlots);
      entry.injected = injected;
      return injected;
    }
    const resolved = { system: nested(prompt.systemPrompt, false), user: nested(prompt.userPrompt, false) };
    // Inside another EXECUTE subtree the child that runs it owns this slot; the marker gives the
    // enclosing prompt's cache identity, and carries this prompt's own resolved text, so that
    // updating any prompt below changes the identity of every cached answer above it (PC-5).
    if (!ownSlots) return [`\u0000execute:${id}:${depth}:${JSON.stringify(resolved)}\u0000`];
    const slot = this.slots.length;
    this.slots.push({ slot, promptId: id, depth, resolved });
    entry.slot = slot;
    return [{ slot }];
  }
}

function idsIn(texts: readonly (string | null | undefined)[]): string[] {
  const ids = new Set<string>();
  for (const text of texts)
    if (text) for (const t of tokenize(text)) if (t.kind === 'prompt' && !t.error) ids.add(t.promptId);
  return [...ids];
}

/** Adjacent strings joined. */
function merge(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const p of parts) {
    const last = out[out.length - 1];
    if (typeof p === 'string' && typeof last === 'string') out[out.length - 1] = last + p;
    else if (p !== '') out.push(p);
  }
  return out;
}

/** PC-6: the message of a fatal (depth or cycle) problem at execution. */
export const fatalMessage = (p: ReferenceProblem): string => `Failed to execute [${p.promptId}]: ${p.reason}`;

/** Fills the slots with answers. */
export function fillParts(parts: readonly Part[], answer: (slot: number) => string): string {
  return parts
    .map((p) => {
      if (typeof p === 'string') return p;
      if (p && typeof p === 'object' && Number.isInteger(p.slot)) return answer(p.slot);
      throw new TypeError('A plan part is neither text nor a slot');
    })
    .join('');
}
