// The template engine (SPEC §8.2 AG-4/AG-10, §9.3 EX-3/EX-4, §12 PC-3, §14 PV-1): one tokenizer for
// every template, a single-pass renderer and the post-render placeholder check. Pure.
//
// How braces tokenize. The scanner goes left to right; at each `{` it tries the forms below and
// the first one that matches there wins; otherwise that one `{` is literal text and the scan goes
// on at the next character (so a token may start inside a run of braces). Everything that is not
// a token is literal text, and adjacent text is one text token.
//   {name}                         placeholder, name ^[A-Za-z][A-Za-z0-9]*$
//   {{prompt:<body>}}              prompt reference; <body> runs to the first `}}` and contains
//                                  no `{` and no line break; a malformed body gives a prompt
//                                  token with `error` (the author clearly meant a reference)
//   {{foundationallm:<v>[:<fmt>]}} variable, v ^[A-Za-z_][A-Za-z0-9_]*$; <fmt> is everything after
//                                  the second `:` up to the first `}}` (no `{`, no line break);
//                                  an empty <fmt> is no format; a bad <v> is literal text
//   {{name}}                       double, name ^[A-Za-z_][A-Za-z0-9_]*$ (no spaces inside)
// The prefixes are case-sensitive. Examples (T = text):
//   `{{question}}`        → double question              (never a placeholder)
//   `{{{question}}}`      → T`{`, double question, T`}`
//   `{{question}`         → T`{`, placeholder question
//   `{question}}`         → placeholder question, T`}`
//   `{{foundationallm:current_datetime_utc:HH:mm:ss}}` → variable, format `HH:mm:ss`
//   `{{prompt:abc|mode=execute}}` → prompt abc, mode execute
//   `{{prompt:abc|x=1}}`  → prompt abc with error (only `mode` is a parameter, PC-3)
//   `{{prompt:}}`         → prompt '' with error;  `{{prompt:abc}` → all text
//   `{ }`, `{"a":1}`, `{a_b}`, `{1}`, `}}`, a lone `{` → text

type TextToken = { kind: 'text'; text: string };
type PlaceholderToken = { kind: 'placeholder'; name: string; start: number };
export type PromptMode = 'template' | 'execute' | 'auto';
export type PromptToken = {
  kind: 'prompt';
  promptId: string;
  mode?: PromptMode;
  raw: string;
  start: number;
  error?: string;
};
export type VariableToken = {
  kind: 'variable';
  variable: string;
  format?: string;
  raw: string;
  start: number;
};
export type DoubleToken = { kind: 'double'; name: string; raw: string; start: number };
export type Token = TextToken | PlaceholderToken | PromptToken | VariableToken | DoubleToken;

export const PLACEHOLDER_NAME = /^[A-Za-z][A-Za-z0-9]*$/;
const PROMPT_ID = /^[A-Za-z0-9._-]{1,128}$/;
const WORD = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MODES: readonly string[] = ['template', 'execute', 'auto'];

const isAlpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isAlnum = (c: number) => isAlpha(c) || (c >= 48 && c <= 57);
const isWordChar = (c: number) => isAlnum(c) || c === 95; // _
const OPEN = 123; // {
const CLOSE = 125; // }

/** End (exclusive) of `{name}` at `start`, or -1. */
function placeholderEnd(s: string, start: number): number {
  let i = start + 1;
  if (!isAlpha(s.charCodeAt(i))) return -1;
  while (isAlnum(s.charCodeAt(i))) i++;
  return s.charCodeAt(i) === CLOSE ? i + 1 : -1;
}

/** Index of the first `}}` from `from`, or -1 when a `{`, a line break or the end comes first. */
function closeOf(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === OPEN || c === 10 || c === 13) return -1;
    if (c === CLOSE && s.charCodeAt(i + 1) === CLOSE) return i;
  }
  return -1;
}

function promptToken(body: string, raw: string, start: number): PromptToken {
  const [promptId = '', ...params] = body.split('|');
  const token: PromptToken = { kind: 'prompt', promptId, raw, start };
  const errors: string[] = [];
  if (!PROMPT_ID.test(promptId))
    errors.push(`Invalid prompt id "${promptId}": expected [A-Za-z0-9._-]{1,128}`);
  for (const param of params) {
    const eq = param.indexOf('=');
    const name = eq < 0 ? param : param.slice(0, eq);
    const value = eq < 0 ? '' : param.slice(eq + 1);
    const mode = value.toLowerCase(); // `mode=EXECUTE` names the same mode as the seed's TEMPLATE/EXECUTE
    if (name !== 'mode') errors.push(`Unknown reference parameter "${name}": only mode is supported`);
    else if (token.mode !== undefined) errors.push('The mode is given more than once');
    else if (!MODES.includes(mode))
      errors.push(`Invalid mode "${value}": expected template, execute or auto`);
    else token.mode = mode as PromptMode;
  }
  if (errors.length > 0) token.error = errors.join('; ');
  return token;
}

/** The token starting with `{{` at `start`, or undefined when none does. */
function doubleBraceToken(
  s: string,
  start: number,
): Exclude<Token, TextToken | PlaceholderToken> | undefined {
  const inner = start + 2;
  const prefixed = (prefix: string) => s.startsWith(prefix, inner);
  if (prefixed('prompt:') || prefixed('foundationallm:')) {
    const bodyStart = s.indexOf(':', inner) + 1;
    const close = closeOf(s, bodyStart);
    if (close < 0) return undefined;
    const body = s.slice(bodyStart, close);
    const raw = s.slice(start, close + 2);
    if (prefixed('prompt:')) return promptToken(body, raw, start);
    const colon = body.indexOf(':');
    const variable = colon < 0 ? body : body.slice(0, colon);
    if (!WORD.test(variable)) return undefined;
    const format = colon < 0 ? '' : body.slice(colon + 1);
    return format === ''
      ? { kind: 'variable', variable, raw, start }
      : { kind: 'variable', variable, format, raw, start };
  }
  let end = inner;
  while (isWordChar(s.charCodeAt(end))) end++;
  const name = s.slice(inner, end);
  if (!WORD.test(name) || s.charCodeAt(end) !== CLOSE || s.charCodeAt(end + 1) !== CLOSE) return undefined;
  return { kind: 'double', name, raw: s.slice(start, end + 2), start };
}

/** The original text of a token. */
export function tokenText(token: Token): string {
  return token.kind === 'text' ? token.text : token.kind === 'placeholder' ? `{${token.name}}` : token.raw;
}

export function tokenize(template: string): Token[] {
  const tokens: Token[] = [];
  let textStart = 0;
  let i = template.indexOf('{');
  while (i >= 0) {
    let token: Token | undefined;
    if (template.charCodeAt(i + 1) === OPEN) token = doubleBraceToken(template, i);
    else {
      const end = placeholderEnd(template, i);
      if (end > 0) token = { kind: 'placeholder', name: template.slice(i + 1, end - 1), start: i };
    }
    if (token === undefined) {
      i = template.indexOf('{', i + 1);
      continue;
    }
    if (i > textStart) tokens.push({ kind: 'text', text: template.slice(textStart, i) });
    tokens.push(token);
    textStart = i + tokenText(token).length;
    i = template.indexOf('{', textStart);
  }
  if (textStart < template.length) tokens.push({ kind: 'text', text: template.slice(textStart) });
  return tokens;
}

/** Values for tokens; `undefined` (or a missing function) leaves a token's original text. */
export interface Resolver {
  placeholder?(name: string): string | undefined;
  prompt?(token: PromptToken): string | undefined;
  variable?(token: VariableToken): string | undefined;
  /** Unprefixed `{{name}}` runtime variables of stored prompts (§12 PC-9, §13 CH-2). */
  double?(token: DoubleToken): string | undefined;
}

/**
 * EX-3: every token is replaced by its value once, left to right; the text a resolver returns
 * goes to the output as is and is never scanned again (a value `{x}` stays `{x}`).
 */
export function render(tokens: readonly Token[], resolve: Resolver): string {
  let out = '';
  for (const t of tokens) {
    let value: string | undefined;
    if (t.kind === 'placeholder') value = resolve.placeholder?.(t.name);
    else if (t.kind === 'prompt') value = resolve.prompt?.(t);
    else if (t.kind === 'variable') value = resolve.variable?.(t);
    else if (t.kind === 'double') value = resolve.double?.(t);
    out += value ?? tokenText(t);
  }
  return out;
}

/**
 * EX-4: the first substring of placeholder form `{name}` in rendered text, wherever it stands
 * (so `{{id}}` and `x{id}y` count: the check is on the form, not on tokens), else undefined.
 */
export function findPlaceholderLike(text: string): string | undefined {
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) {
    const end = placeholderEnd(text, i);
    if (end > 0) return text.slice(i, end);
  }
  return undefined;
}
