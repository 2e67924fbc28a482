// Agent validation and normalisation (SPEC §8.2 AG-1..AG-10, §18 limits), pure. Every problem is
// collected (one ErrorItem each) so that a client fixes its agent in one round trip; the stored
// form has every `include` and every retrieval param materialised (§8.3). The reference checks of
// AG-10 (`{{prompt:id}}` exists, is readable, acyclic, depth ≤ 3) need the database and live with
// the prompt library; only the unprefixed `{{name}}` ban is checked here.
import { InvalidInput, type ErrorItem } from './errors';
import { PLACEHOLDER_NAME, tokenize } from './template';

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
export interface AgentLimits {
  maxMessages: number;
  maxPlaceholders: number;
  /** UTF-8 bytes of one template (tool router prompts included). */
  maxTemplateBytes: number;
  maxK: number;
}
export const DEFAULT_AGENT_LIMITS: AgentLimits = {
  maxMessages: 50,
  maxPlaceholders: 20,
  maxTemplateBytes: 100 * 1024,
  maxK: 100,
};

/** AG-8: the defaults of a retrieval placeholder without `params` (SR-2). */
export const DEFAULT_PARAMS = {
  similarity: { k: 5, threshold: null } as SimilarityParams,
  mmr: { k: 5, fetch_k: 10, lambda_mult: 0.5, threshold: null } as MmrParams,
};
const ROLES: readonly string[] = ['system', 'user', 'assistant'];
const RETRIEVAL_TYPES: readonly string[] = ['similarity', 'mmr'];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: Json, key: string) => Object.hasOwn(o, key);

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4; // a surrogate pair is one 4-byte code point
      i++;
    } else n += 3;
  }
  return n;
}

class Problems {
  readonly items: ErrorItem[] = [];
  add(type: string, path: string, message: string): void {
    this.items.push({ type, path, message });
  }
  unknownFields(o: Json, allowed: readonly string[], path: string, label: string): void {
    for (const key of Object.keys(o))
      if (!allowed.includes(key))
        this.add('unknown_field', `${path}.${key}`, `${label}: unknown field ${key}`);
  }
  templateSize(template: string, path: string, limits: AgentLimits): void {
    const bytes = utf8Length(template);
    if (bytes > limits.maxTemplateBytes)
      this.add(
        'limit_exceeded',
        path,
        `${path} is ${bytes} bytes; the template limit is ${limits.maxTemplateBytes} bytes`,
      );
  }
}

/** One entry per given message, aligned with `prompt[i]`; undefined where it is not an object. */
function parseMessages(raw: unknown, limits: AgentLimits, p: Problems): (PromptMessage | undefined)[] {
  if (!Array.isArray(raw)) {
    p.add('invalid_type', 'prompt', 'prompt must be an array of messages');
    return [];
  }
  if (raw.length > limits.maxMessages)
    p.add(
      'limit_exceeded',
      'prompt',
      `prompt has ${raw.length} messages; the limit is ${limits.maxMessages}`,
    );
  return raw.map((m: unknown, i) => {
    const path = `prompt[${i}]`;
    if (!isObject(m)) return void p.add('invalid_type', path, `${path} must be an object`);
    p.unknownFields(m, ['role', 'template', 'include'], path, path);
    const { role, template, include = true } = m;
    if (typeof role !== 'string' || !ROLES.includes(role))
      p.add('invalid_role', `${path}.role`, `${path}.role must be system, user or assistant`);
    if (typeof template !== 'string')
      p.add('invalid_type', `${path}.template`, `${path}.template must be a string`);
    else p.templateSize(template, `${path}.template`, limits);
    if (typeof include !== 'boolean')
      p.add('invalid_type', `${path}.include`, `${path}.include must be a boolean`);
    return { role, template: typeof template === 'string' ? template : '', include } as PromptMessage;
  });
}

/** AG-1..AG-4, AG-10 (unprefixed) over the shape-checked messages. */
function checkPrompt(messages: (PromptMessage | undefined)[], names: ReadonlySet<string>, p: Problems): void {
  if (!messages.some((m) => m?.role === 'system'))
    p.add('missing_system_message', 'prompt', 'The prompt must contain at least one system message');
  if (!messages.some((m) => m?.role === 'user'))
    p.add('missing_user_message', 'prompt', 'The prompt must contain at least one user message');
  const last = messages.length - 1; // a last message of the wrong shape is reported as such
  const lastRole = messages[last]?.role;
  if (lastRole !== undefined && lastRole !== 'user' && ROLES.includes(lastRole))
    p.add('last_message_not_user', `prompt[${last}].role`, 'The last prompt message must have role user');
  messages.forEach((m, i) => {
    if (m === undefined) return;
    const path = `prompt[${i}].template`;
    const reported = new Set<string>();
    for (const t of tokenize(m.template)) {
      if (t.kind === 'placeholder' && !names.has(t.name) && !reported.has(t.name)) {
        reported.add(t.name);
        p.add('unknown_placeholder', path, `Unknown placeholder {${t.name}} in ${path}`);
      } else if (t.kind === 'double' && !reported.has(t.raw)) {
        reported.add(t.raw);
        const message = `Double-brace variables are not allowed in agent templates: ${t.raw} in ${path}`;
        p.add('double_brace_variable', path, message);
      }
    }
  });
}

/** AG-8 with the SR-2 ranges; `label` is `Placeholder <name>`. */
function parseParams(
  type: 'similarity' | 'mmr',
  raw: unknown,
  path: string,
  label: string,
  limits: AgentLimits,
  p: Problems,
): SimilarityParams | MmrParams {
  if (raw === undefined) return { ...DEFAULT_PARAMS[type] };
  if (!isObject(raw)) {
    p.add('invalid_type', path, `${label}: params must be an object`);
    return { ...DEFAULT_PARAMS[type] };
  }
  const fields = type === 'mmr' ? ['k', 'fetch_k', 'lambda_mult', 'threshold'] : ['k', 'threshold'];
  for (const key of Object.keys(raw))
    if (!fields.includes(key))
      p.add('invalid_param', `${path}.${key}`, `${label}: ${key} is not a parameter of ${type} placeholders`);
  const num = (key: string, integer: boolean, min: number, max: number): number => {
    const v = raw[key] ?? 0; // the quirk: a field omitted inside params is 0
    const at = `${path}.${key}`;
    if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)))
      p.add('invalid_type', at, `${label}: ${key} must be ${integer ? 'an integer' : 'a number'}`);
    else if (v < min) p.add('out_of_range', at, `${label}: ${key} must be at least ${min}`);
    else if (v > max) p.add('out_of_range', at, `${label}: ${key} must be at most ${max}`);
    return v as number;
  };
  const k = num('k', true, 1, limits.maxK);
  const threshold = raw.threshold ?? null;
  if (threshold !== null && (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold < 0))
    p.add('invalid_param', `${path}.threshold`, `${label}: threshold must be null or a number at least 0`);
  if (type === 'similarity') return { k, threshold: threshold as number | null };
  const fetch_k = num('fetch_k', true, 0, 1000);
  const lambda_mult = num('lambda_mult', false, 0, 1);
  return { k, fetch_k, lambda_mult, threshold: threshold as number | null };
}

function parsePlaceholders(raw: unknown, limits: AgentLimits, p: Problems): Placeholder[] {
  if (!Array.isArray(raw)) {
    p.add('invalid_type', 'placeholders', 'placeholders must be an array');
    return [];
  }
  if (raw.length > limits.maxPlaceholders)
    p.add(
      'limit_exceeded',
      'placeholders',
      `placeholders has ${raw.length} entries; the limit is ${limits.maxPlaceholders}`,
    );
  const queryNames = new Set(
    raw.flatMap((o: unknown) =>
      isObject(o) && o.type === 'query' && typeof o.name === 'string' ? [o.name] : [],
    ),
  );
  const seen = new Set<string>();
  const result: Placeholder[] = [];
  raw.forEach((o: unknown, i) => {
    const path = `placeholders[${i}]`;
    if (!isObject(o)) return p.add('invalid_type', path, `${path} must be an object`);
    const { name, type, target } = o;
    const label = typeof name === 'string' ? `Placeholder ${name}` : path;
    if (typeof name !== 'string') p.add('invalid_type', `${path}.name`, `${path}.name must be a string`);
    else if (!PLACEHOLDER_NAME.test(name))
      p.add('invalid_placeholder_name', `${path}.name`, `${label}: name must match ^[A-Za-z][A-Za-z0-9]*$`);
    else if (seen.has(name))
      p.add('duplicate_placeholder', `${path}.name`, `Duplicate placeholder name: ${name}`);
    if (typeof name === 'string') seen.add(name);
    if (type === 'query') {
      p.unknownFields(o, ['name', 'type', 'target', 'params'], path, label);
      for (const key of ['target', 'params'])
        if (has(o, key))
          p.add('invalid_field', `${path}.${key}`, `${label}: a query placeholder takes no ${key}`);
      result.push({ name: String(name), type });
      return;
    }
    if (type === 'full_text' || type === 'hybrid')
      return p.add(
        'invalid_placeholder_type',
        `${path}.type`,
        `${label}: ${type} is not available as placeholders`,
      );
    if (typeof type !== 'string' || !RETRIEVAL_TYPES.includes(type))
      return p.add(
        'invalid_placeholder_type',
        `${path}.type`,
        `${label}: type must be query, similarity or mmr`,
      );
    const retrieval = type as 'similarity' | 'mmr';
    p.unknownFields(o, ['name', 'type', 'target', 'params'], path, label);
    if (target === undefined) p.add('missing_target', `${path}.target`, `${label}: target is required`);
    else if (typeof target !== 'string')
      p.add('invalid_type', `${path}.target`, `${label}: target must be a string`);
    else if (!queryNames.has(target))
      p.add('invalid_target', `${path}.target`, `${label}: target ${target} must name a query placeholder`);
    const params = parseParams(retrieval, o.params, `${path}.params`, label, limits, p);
    result.push({ name: String(name), type: retrieval, target: String(target), params } as Placeholder);
  });
  return result;
}

function parseMetadata(raw: unknown, p: Problems): AgentDefinition['metadata'] {
  if (raw === undefined) return {};
  if (!isObject(raw)) {
    p.add('invalid_type', 'metadata', 'metadata must be an object');
    return {};
  }
  for (const [key, value] of Object.entries(raw))
    if (!isObject(value))
      p.add('invalid_metadata', `metadata.${key}`, `metadata.${key} must be a JSON object`);
  return raw as AgentDefinition['metadata'];
}

function parseTools(raw: unknown, limits: AgentLimits, p: Problems): Tool[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    p.add('invalid_type', 'tools', 'tools must be an array');
    return [];
  }
  return raw.flatMap((t: unknown, i): Tool[] => {
    const path = `tools[${i}]`;
    if (!isObject(t)) {
      p.add('invalid_type', path, `${path} must be an object`);
      return [];
    }
    p.unknownFields(t, ['name', 'description', 'router_prompt'], path, path);
    const { name, description, router_prompt } = t;
    if (typeof name !== 'string' || name === '')
      p.add('invalid_type', `${path}.name`, `${path}.name must be a non-empty string`);
    if (typeof description !== 'string')
      p.add('invalid_type', `${path}.description`, `${path}.description must be a string`);
    if (router_prompt !== undefined && typeof router_prompt !== 'string')
      p.add('invalid_type', `${path}.router_prompt`, `${path}.router_prompt must be a string`);
    else if (router_prompt !== undefined) p.templateSize(router_prompt, `${path}.router_prompt`, limits);
    const tool: Tool = { name: String(name), description: String(description) };
    if (typeof router_prompt === 'string') tool.router_prompt = router_prompt;
    return [tool];
  });
}

/**
 * Validates an agent definition (create, or the merged result of an update: AG-11) and returns
 * its stored form. Throws InvalidInput whose message joins every problem with "; " and whose
 * `items` hold one `{type, path, message}` per problem.
 */
export function normaliseAgent(
  input: { prompt: unknown; placeholders: unknown; metadata?: unknown; tools?: unknown },
  limits: Partial<AgentLimits> = {},
): AgentDefinition {
  const l = { ...DEFAULT_AGENT_LIMITS, ...limits };
  const p = new Problems();
  const messages = parseMessages(input.prompt, l, p);
  // AG-4 checks against every name given, valid or not, so one bad name is reported once.
  const names = new Set(
    Array.isArray(input.placeholders)
      ? input.placeholders.flatMap((o: unknown) =>
          isObject(o) && typeof o.name === 'string' ? [o.name] : [],
        )
      : [],
  );
  checkPrompt(messages, names, p);
  const placeholders = parsePlaceholders(input.placeholders, l, p);
  const metadata = parseMetadata(input.metadata, p);
  const tools = parseTools(input.tools, l, p);
  if (p.items.length > 0) throw new InvalidInput(p.items.map((i) => i.message).join('; '), p.items);
  return { prompt: messages as PromptMessage[], placeholders, metadata, tools };
}

/** §8.4: the names of the query placeholders, in placeholder order. */
export function inputVariables(def: AgentDefinition): string[] {
  return def.placeholders.flatMap((ph) => (ph.type === 'query' ? [ph.name] : []));
}
