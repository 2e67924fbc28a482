// Items of the Responses API (issue 34) as Agentry keeps them: the `input` a client sent, the
// context a `previous_response_id` brings, the output a stored response holds. Only `type` is known
// of every item: an item of a type Agentry does not interpret is kept and reaches the model as
// given (SPEC OR-1). Ids: a client's or a provider's id is kept (reasoning and compaction items
// must go back to the provider with theirs); an item without one gets an Agentry id, which no
// provider knows, so it is never sent on (`forProvider`).
import { InvalidInput } from './errors';

export interface ResponseItem {
  type: string;
  id?: string;
  [field: string]: unknown;
}

/** What a client may send as `input`: text (one user message) or items. */
export type InputBody = string | Record<string, unknown>[];

const PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco' };

/** `msg_<uuid>_…`, `fc_<uuid>…`: ids Agentry made, for input items and for its output messages. */
const AGENTRY_ID = /^(msg|fc|fco|item)_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

export const isAgentryItemId = (id: unknown): boolean => typeof id === 'string' && AGENTRY_ID.test(id);

/** The item as a provider may take it: without an id only Agentry knows. */
export function forProvider(item: ResponseItem): ResponseItem {
  if (!isAgentryItemId(item.id)) return item;
  const { id: _id, ...rest } = item;
  return rest as ResponseItem;
}

const notFoundItem = (index: number, id: string): InvalidInput => {
  const message = `Item with id '${id}' not found.`;
  return new InvalidInput(message, [{ type: 'item_not_found', path: `input[${index}].id`, message }]);
};

/**
 * `input` as stored items, in order: a string is one user message, an item with a role and no
 * `type` a message; each keeps its id or gets `<kind>_<newId()>`. An `item_reference` becomes the
 * item it names, looked up in the context and the items before it (400 `item_not_found`).
 */
export function inputItems(
  input: InputBody | undefined,
  context: readonly ResponseItem[],
  newId: () => string,
): ResponseItem[] {
  if (input === undefined) return [];
  const list = typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
  const items: ResponseItem[] = [];
  for (const [index, given] of list.entries()) {
    const type = typeof given.type === 'string' ? given.type : 'message';
    if (type === 'item_reference') {
      const id = String(given.id);
      const found = [...context, ...items].find((item) => item.id === id);
      if (!found) throw notFoundItem(index, id);
      items.push(found);
      continue;
    }
    const id =
      typeof given.id === 'string' && given.id !== '' ? given.id : `${PREFIX[type] ?? 'item'}_${newId()}`;
    items.push({ ...given, type, id });
  }
  return items;
}

/**
 * A `function_call_output` continues a tool call: its `call_id` must be a `function_call`'s of the
 * context or of the input before it, else a 400 `tool_call_not_found` (before anything starts).
 */
export function checkToolOutputs(context: readonly ResponseItem[], input: readonly ResponseItem[]): void {
  const calls = new Set<unknown>();
  for (const item of [...context, ...input]) {
    if (item.type === 'function_call') calls.add(item.call_id);
    if (item.type !== 'function_call_output' || calls.has(item.call_id)) continue;
    const message = `No tool call found for function call output with call_id ${String(item.call_id)}.`;
    throw new InvalidInput(message, [{ type: 'tool_call_not_found', path: 'input', message }]);
  }
}

/** Text of a message's content: a string, or its text and refusal parts; `input_file` URLs apart. */
export function contentOf(content: unknown): { text: string; fileUrls: string[] } {
  if (typeof content === 'string') return { text: content, fileUrls: [] };
  const parts = Array.isArray(content) ? (content as Record<string, unknown>[]) : [];
  const texts = parts.flatMap((part) =>
    typeof part.text === 'string' ? [part.text] : typeof part.refusal === 'string' ? [part.refusal] : [],
  );
  const fileUrls = parts.flatMap((part) =>
    part.type === 'input_file' && typeof part.file_url === 'string' ? [part.file_url] : [],
  );
  return { text: texts.join('\n'), fileUrls };
}
