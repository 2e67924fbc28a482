// A deliberately simple reference for `{name}` substitution (SPEC §9.3 EX-3) and the EX-4 check,
// written from the SPEC and the tokenization rules in domain/template.ts's header, independently
// of its scanner: one global regex over the ORIGINAL template, whose alternatives are the
// double-brace forms (kept as they are) and `{name}` (replaced). `String.prototype.replace` with a
// function never rescans what it inserted and never interprets `$` in it, so this is single-pass
// by construction.

const DOUBLE_BRACE_FORMS = [
  /\{\{prompt:[^{\r\n]*?\}\}/.source,
  /\{\{foundationallm:[A-Za-z_]\w*(?::[^{\r\n]*?)?\}\}/.source,
  /\{\{[A-Za-z_]\w*\}\}/.source,
];
const TOKEN = new RegExp([...DOUBLE_BRACE_FORMS, /\{([A-Za-z][A-Za-z0-9]*)\}/.source].join('|'), 'g');

/** `{name}` → `values.get(name)` when present; everything else, double-brace forms included, verbatim. */
export function referenceRender(template: string, values: ReadonlyMap<string, string>): string {
  return template.replace(TOKEN, (match: string, name: string | undefined) =>
    name !== undefined && values.has(name) ? values.get(name)! : match,
  );
}

/** The `{name}` names of a template, in order of appearance (duplicates kept). */
export function referencePlaceholders(template: string): string[] {
  return [...template.matchAll(TOKEN)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));
}

/** EX-4 reference: the first `{name}` substring anywhere in the text. */
export function referencePlaceholderLike(text: string): string | undefined {
  return /\{[A-Za-z][A-Za-z0-9]*\}/.exec(text)?.[0];
}
