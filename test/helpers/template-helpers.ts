// What the tests ask of templates through the product's own tokenizer and resolver (the product
// renders tokens as it goes and never needs these shortcuts): a template's `{name}` placeholders,
// one variable token's resolved text, a template with its system variables resolved.
import { templateVariableResolver, type VariableContext } from '../../domain/system-variables';
import { render, tokenize, type VariableToken } from '../../domain/template';

/** Distinct `{name}` placeholders in order of first appearance. */
export function placeholderNames(template: string): string[] {
  const names = new Set<string>();
  for (const t of tokenize(template)) if (t.kind === 'placeholder') names.add(t.name);
  return [...names];
}

/** PV-1..PV-5: the resolved text of one variable token, or undefined to leave it as written. */
export function resolveVariableToken(token: VariableToken, context: VariableContext): string | undefined {
  return templateVariableResolver(context).variable(token);
}

/** PV-1..PV-6: a template with its system variables resolved, and the names resolved. */
export function resolveTemplateVariables(
  template: string,
  context: VariableContext,
): { text: string; resolved: string[] } {
  const resolver = templateVariableResolver(context);
  const text = render(tokenize(template), { variable: resolver.variable });
  return { text, resolved: resolver.resolvedNames() };
}
