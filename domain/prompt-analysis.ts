// Stored prompts (SPEC §12): the embeddability analysis recomputed on every save (PC-2), the
// execution mode (PC-3) and the references a prompt text holds, with their positions (PC-7).
// Pure: the tokenizer of domain/template.ts decides what is a `{{name}}` variable and what is a
// `{{prompt:id}}` reference, so the analysis and the renderer always agree.
import { tokenize, type PromptMode, type PromptToken } from './template';

export type ExecutionMode = 'TEMPLATE' | 'EXECUTE';

export type Attachment = { type: 'file'; fileId: string } | { type: 'url'; url: string };

export interface PromptDefinition {
  systemPrompt: string | null;
  userPrompt: string;
  temperature: number | null;
  attachment: Attachment | null;
  routingPolicyId: string | null;
  customGatewayId: string | null;
  /** The explicit flags as stored (the analysis ORs them with what the text and attachment say). */
  requiresAttachment: boolean;
  requiresDynamicData: boolean;
}

interface Embeddability {
  isEmbeddable: boolean;
  executionMode: ExecutionMode;
  requiresAttachment: boolean;
  requiresDynamicData: boolean;
  blockedReason: string | null;
  suggestedMode: ExecutionMode;
  warnings: string[];
  /** The `{{name}}` runtime variables, in order of first appearance. */
  runtimeVariables: string[];
}

const DYNAMIC_MARKERS = ['[file]', '[url]', '[data]', '[attachment]', '[input]'] as const;
const LOW_TEMPERATURE = 0.3;
const HIGH_TEMPERATURE = 1.2;

/** Distinct `{{name}}` tokens of the texts, in order of first appearance (PC-2). */
export function runtimeVariables(...texts: (string | null)[]): string[] {
  const names = new Set<string>();
  for (const text of texts) {
    if (!text) continue;
    for (const token of tokenize(text)) if (token.kind === 'double') names.add(token.name);
  }
  return [...names];
}

/** PC-2: markers in the order of DYNAMIC_MARKERS that appear in any of the texts. */
function markersIn(...texts: (string | null)[]): string[] {
  return DYNAMIC_MARKERS.filter((m) => texts.some((t) => t?.includes(m)));
}

/** PC-3: EXECUTE when routing is configured, else TEMPLATE. */
export function executionModeOf(
  p: Pick<PromptDefinition, 'routingPolicyId' | 'customGatewayId'>,
): ExecutionMode {
  return p.routingPolicyId || p.customGatewayId ? 'EXECUTE' : 'TEMPLATE';
}

export function analyzeEmbeddability(p: PromptDefinition): Embeddability {
  const variables = runtimeVariables(p.systemPrompt, p.userPrompt);
  const markers = markersIn(p.systemPrompt, p.userPrompt);
  const reasons: string[] = [];
  if (variables.length > 0)
    reasons.push(`Requires ${variables.length} runtime variable(s): ${variables.join(', ')}`);
  if (p.attachment) reasons.push('Prompt has file/URL attachment configured');
  if (markers.length > 0) reasons.push(`Contains dynamic marker(s): ${markers.join(', ')}`);
  if (p.requiresDynamicData) reasons.push('Marked as requiring dynamic data');
  if (p.requiresAttachment) reasons.push('Marked as requiring an attachment');
  const requiresDynamicData = variables.length > 0 || markers.length > 0 || p.requiresDynamicData;
  const requiresAttachment = p.attachment !== null || p.requiresAttachment;
  const warnings: string[] = [];
  if (p.temperature !== null && p.temperature < LOW_TEMPERATURE)
    warnings.push(`Temperature ${p.temperature} is below ${LOW_TEMPERATURE}: consider EXECUTE mode`);
  if (p.temperature !== null && p.temperature > HIGH_TEMPERATURE)
    warnings.push(`Temperature ${p.temperature} is above ${HIGH_TEMPERATURE}: consider EXECUTE mode`);
  const mode = executionModeOf(p);
  const isEmbeddable = !requiresDynamicData && !requiresAttachment;
  return {
    isEmbeddable,
    executionMode: mode,
    requiresAttachment,
    requiresDynamicData,
    blockedReason: isEmbeddable ? null : reasons.join('; '),
    suggestedMode: mode,
    warnings,
    runtimeVariables: variables,
  };
}

/** A `{{prompt:...}}` token of a text, with the field that holds it and its offset there (PC-7). */
interface ReferenceAt {
  token: PromptToken;
  field: string;
  position: number;
}

/** Every reference of the named texts, in text order (fields in the order given). */
export function referencesIn(texts: Record<string, string | null | undefined>): ReferenceAt[] {
  const out: ReferenceAt[] = [];
  for (const [field, text] of Object.entries(texts)) {
    if (!text) continue;
    for (const token of tokenize(text))
      if (token.kind === 'prompt') out.push({ token, field, position: token.start });
  }
  return out;
}

/**
 * The mode a reference runs in (PC-3): its own `|mode=`; AUTO, like a reference without a mode,
 * takes the referenced prompt's `executionMode`.
 */
export function effectiveMode(mode: PromptMode | undefined, referenced: ExecutionMode): ExecutionMode {
  if (mode === 'template') return 'TEMPLATE';
  if (mode === 'execute') return 'EXECUTE';
  return referenced;
}
