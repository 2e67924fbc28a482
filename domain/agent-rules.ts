// Agent validation and normalisation (SPEC §8.2 AG-1..AG-10, §18 limits), pure: the messages
// (AG-1..AG-4), metadata and tools here, the placeholders in agent-placeholders.ts. Every problem is
// collected (one ErrorItem each) so that a client fixes its agent in one round trip; the stored
// form has every `include` and every retrieval param materialised (§8.3). The reference checks of
// AG-10 (`{{prompt:id}}` exists, is readable, acyclic, depth within the configured chain depth) need the database and live with
// the prompt library; only the unprefixed `{{name}}` ban is checked here.
import type { AgentDefinition, AgentLimits, PromptMessage, Tool } from './agent-definition';
import { parsePlaceholders } from './agent-placeholders';
import { InvalidInput } from './errors';
import { DEFAULT_LIMITS } from './limits';
import { tokenize } from './template';
import { isObject, Problems } from './validation-problems';

const ROLES: readonly string[] = ['system', 'user', 'assistant'];

/** One entry per given message, aligned with `prompt[i]`; undefined where it is not an object. */
function parseMessages(raw: unknown, limits: AgentLimits, p: Problems): (PromptMessage | undefined)[] {
  if (!Array.isArray(raw)) {
    p.add('invalid_type', 'prompt', 'prompt must be an array of messages');
    return [];
  }
  if (raw.length > limits.agentMessages)
    p.add(
      'limit_exceeded',
      'prompt',
      `prompt has ${raw.length} messages; the limit is ${limits.agentMessages}`,
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
    else p.templateSize(template, `${path}.template`, limits.templateBytes);
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
    else if (router_prompt !== undefined)
      p.templateSize(router_prompt, `${path}.router_prompt`, limits.templateBytes);
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
  const l: AgentLimits = { ...DEFAULT_LIMITS, ...limits };
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
