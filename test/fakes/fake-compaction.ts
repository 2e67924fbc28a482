// The fake model server's POST <prefix>/responses/compact (OpenAI's conversation compaction): the
// user messages are kept, everything else becomes one `compaction` item whose `encrypted_content`
// is base64 of the dropped items' JSON, so a test can tell what was compacted. Missing `model` is
// the provider's 400.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

type Json = Record<string, unknown>;

const idOf = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

const asItems = (input: unknown): Json[] =>
  typeof input === 'string'
    ? [{ type: 'message', role: 'user', content: input }]
    : Array.isArray(input)
      ? input
      : [];

/** A kept message as the provider returns it: its content as parts, a string as one input_text. */
const contentParts = (content: unknown): unknown =>
  typeof content === 'string' ? [{ type: 'input_text', text: content }] : content;

function send(res: ServerResponse, status: number, body: Json): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': idOf('req') });
  res.end(JSON.stringify(body));
}

/** Answers one compaction; `record` sees every parsed request (its model and body). */
export async function handleCompaction(
  req: IncomingMessage,
  res: ServerResponse,
  record: (model: string, body: Json) => void,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
  const model = typeof body.model === 'string' ? body.model : '';
  record(model, body);
  if (model === '') {
    const error = { message: "Missing required parameter: 'model'.", type: 'invalid_request_error' };
    return send(res, 400, { error: { ...error, param: 'model', code: 'missing_required_parameter' } });
  }
  const items = asItems(body.input);
  const kept = items.filter(
    (item) => (item.role ?? 'user') === 'user' && (item.type ?? 'message') === 'message',
  );
  const dropped = items.filter((item) => !kept.includes(item));
  const encrypted = Buffer.from(JSON.stringify(dropped)).toString('base64');
  send(res, 200, {
    id: idOf('cmp'),
    object: 'response.compaction',
    created_at: Math.floor(Date.now() / 1000),
    output: [
      ...kept.map((item) => ({
        id: idOf('msg'),
        type: 'message',
        status: 'completed',
        ...item,
        content: contentParts(item.content),
      })),
      { id: idOf('cmp'), type: 'compaction', encrypted_content: encrypted },
    ],
    usage: {
      input_tokens: items.length,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: items.length + 1,
    },
  });
}
