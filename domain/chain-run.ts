// The pure rules of a chain run (SPEC §13 CH-2): the steps a chain stores, the context they
// build, and the variables and attachments a step gets.
import type { Attachment } from './prompt-analysis';
import { render, tokenize } from './template';

/** A stored chain step (CH-1). `variables` values are templates over the inputs and the context. */
export interface ChainStepDefinition {
  order: number;
  promptId: string;
  outputVariable?: string;
  variables?: Record<string, string>;
}

/**
 * The context after the given succeeded steps: each step with an `outputVariable` writes its
 * answer; a later step writing the same name wins (answers are applied in ascending order).
 */
export function chainContext(
  steps: readonly { order: number; outputVariable?: string }[],
  answers: readonly { order: number; text: string }[],
): Record<string, string> {
  const context = new Map<string, string>();
  for (const { order, text } of [...answers].sort((a, b) => a.order - b.order)) {
    const name = steps.find((s) => s.order === order)?.outputVariable;
    if (name) context.set(name, text);
  }
  // fromEntries defines properties, so a name such as `__proto__` is an ordinary key.
  return Object.fromEntries(context);
}

/**
 * CH-2: a step's `variables` are templates whose `{{name}}` tokens take the context's value, else
 * the input's, in one pass (a value is never scanned again; other tokens stay text). The prompt's
 * variables then resolve from the step's variables, then the context, then the inputs. Names no
 * template could resolve are returned in order of first appearance.
 */
export function stepVariables(
  templates: Readonly<Record<string, string>>,
  context: Readonly<Record<string, string>>,
  inputs: Readonly<Record<string, string>>,
): { variables: Record<string, string>; unresolved: string[] } {
  const unresolved = new Set<string>();
  const lookup = (name: string): string | undefined => {
    if (Object.hasOwn(context, name)) return context[name];
    if (Object.hasOwn(inputs, name)) return inputs[name];
    unresolved.add(name);
    return undefined;
  };
  const own = Object.fromEntries(
    Object.entries(templates).map(([name, template]) => [
      name,
      render(tokenize(template), { double: (t) => lookup(t.name) }),
    ]),
  );
  return { variables: { ...inputs, ...context, ...own }, unresolved: [...unresolved] };
}

/** CH-2: the request's attachments, then the step's own (chain metadata), each once. */
export function stepAttachments(
  request: readonly Attachment[],
  step: readonly Attachment[] = [],
): Attachment[] {
  const seen = new Set<string>();
  return [...request, ...step].filter((a) => {
    const key = a.type === 'url' ? `url:${a.url}` : `file:${a.fileId}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
