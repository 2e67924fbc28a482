// SPEC §14 PV-1..PV-6: values of the `{{foundationallm:<variable>[:<format>]}}` system variables.
// Pure.
//
// Only template text is ever resolved (agent messages, stored prompts, tool router prompts):
// callers hand over variable tokens of a template or a template string, never input values or
// fragments (PV-1). A variable's value may itself hold variables (a tool router prompt that says
// `{{foundationallm:current_datetime_utc:yyyy-MM-dd}}`): those resolve too, pass after pass, until
// a pass changes nothing or 10 passes ran (PV-5). Only variable tokens are resolved inside a
// value; its `{name}` placeholders and `{{prompt:}}` references stay verbatim text, and render()
// never rescans what a resolver returned, so a value never meets placeholder substitution.
// Expansion is also bounded in size: a self-referential router prompt doubles at each pass, so a
// nested pass that would grow the text past `maxLength` is not applied.
import { formatDotNetDateTime, type UtcInstant } from './dotnet-datetime';
import { DEFAULT_LIMITS } from './limits';
import { render, tokenize, type VariableToken } from './template';

/** A tool of the agent as the agent definition holds it (SPEC §7 `tools`). */
export interface AgentTool {
  name: string;
  description: string;
  router_prompt?: string;
}

export interface VariableContext {
  /** PV-2: the execution's clock, the workflow's start time (stable across retries and replays). */
  now: UtcInstant;
  tools: readonly AgentTool[];
  /** Nested passes stop before a variable's text exceeds this many characters. */
  maxLength?: number;
}

/** PV-5: the first pass replaces the token itself; at most 9 more resolve what it produced. */
export const MAX_VARIABLE_PASSES = 10;
/** The default rendered-prompt limit of SPEC §18, in characters. */
const DEFAULT_MAX_VARIABLE_LENGTH = DEFAULT_LIMITS.renderedPromptBytes;

const EMPTY_VARIABLES: readonly string[] = [
  'router_prompt',
  'files_prompt',
  'conversation_files',
  'attached_files',
];

const toolList = (tools: readonly AgentTool[]) =>
  tools.map((t) => `- ${t.name}: ${t.description}`).join('\n');

/** Router prompts between their markers, one block per tool that has a non-blank one, blank line between. */
const toolRouterPrompts = (tools: readonly AgentTool[]) =>
  tools
    .filter((t) => (t.router_prompt ?? '').trim() !== '')
    .map((t) => `**TOOL: ${t.name}\n${t.router_prompt}\n**END OF TOOL: ${t.name}`)
    .join('\n\n');

/** One level: the variable's own value, or undefined to leave the token as written (PV-2, PV-4). */
function valueOf(token: VariableToken, context: VariableContext): string | undefined {
  switch (token.variable) {
    case 'current_datetime_utc':
      return formatDotNetDateTime(context.now, token.format);
    case 'tool_list':
      return toolList(context.tools);
    case 'tool_router_prompts':
      return toolRouterPrompts(context.tools);
    default:
      return EMPTY_VARIABLES.includes(token.variable) ? '' : undefined;
  }
}

/**
 * One nested pass over `text`: its variable tokens replaced by their values. Undefined when nothing
 * resolved or the result would be longer than `maxLength`; the names it resolved go to `names`.
 */
function nestedPass(
  text: string,
  context: VariableContext,
  maxLength: number,
  names: Set<string>,
): string | undefined {
  const resolvedHere: string[] = [];
  let tooLong = false;
  let length = 0;
  const next = render(tokenize(text), {
    variable(token) {
      const value = tooLong ? undefined : valueOf(token, context);
      if (value === undefined) return undefined;
      length += value.length - token.raw.length;
      if (text.length + length > maxLength) {
        tooLong = true;
        return undefined;
      }
      resolvedHere.push(token.variable);
      return value;
    },
  });
  if (tooLong || resolvedHere.length === 0) return undefined;
  for (const name of resolvedHere) names.add(name);
  return next;
}

function resolveToken(
  token: VariableToken,
  context: VariableContext,
  names: Set<string>,
): string | undefined {
  let text = valueOf(token, context);
  if (text === undefined) return undefined;
  names.add(token.variable);
  const maxLength = context.maxLength ?? DEFAULT_MAX_VARIABLE_LENGTH;
  for (let pass = 2; pass <= MAX_VARIABLE_PASSES; pass++) {
    const next = nestedPass(text, context, maxLength, names);
    if (next === undefined) break;
    text = next;
  }
  return text;
}

interface TemplateVariableResolver {
  /** For render()'s Resolver: `render(tokenize(template), { ...others, variable: r.variable })`. */
  variable(token: VariableToken): string | undefined;
  /** PV-6: distinct names of the variables resolved so far (nested ones included), first first. */
  resolvedNames(): string[];
}

/**
 * PV-1..PV-6: a `variable` resolver for render() over templates that also records the names it
 * resolved. Its `variable(token)` is the fully resolved text of one variable token, or undefined
 * to leave the token as written (unknown variable, or a date format .NET rejects). Give it only
 * tokens tokenized from a template, never from input values or fragments.
 */
export function templateVariableResolver(context: VariableContext): TemplateVariableResolver {
  const names = new Set<string>();
  return {
    variable: (token) => resolveToken(token, context, names),
    resolvedNames: () => [...names],
  };
}
