// Issue 34 item 4: the rest of /v1/responses through the unchanged openai package (input items,
// DELETE, compaction), the Go SDK's resume as it sends it (a GET with a JSON body and no content
// type), and bad input as 400s naming the field; API and worker processes on the real services.
import { request as httpRequest } from 'node:http';
import OpenAI, { type APIError } from 'openai';
import { Client as PgClient } from 'pg';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { scriptedAnswer, seedAgent } from '../helpers/agent-streams';
import { parseSse } from '../helpers/http';
import { startProcessStack, type ProcessStack } from '../helpers/processes';
import { until } from '../helpers/wait';

const MODEL = 'surface';
const LLM = `rel-${MODEL}`;

let stack: ProcessStack;
let fake: FakeModelServer;
let client: OpenAI;
let bearer: string;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  await seedAgent(stack.admin, fake, { model: MODEL });
  const key = await stack.admin.post('/api_keys', { name: 'surface-app', permissions: ['execute:llms'] });
  bearer = `${key.body.id}.${key.body.secret}`;
  client = new OpenAI({ baseURL: `${stack.admin.baseUrl}/v1`, apiKey: bearer, maxRetries: 0 });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

const asError = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as APIError,
  );

async function sql<T>(text: string, values: unknown[]): Promise<T[]> {
  const pg = new PgClient({ connectionString: stack.database.url });
  await pg.connect();
  try {
    return (await pg.query(text, values)).rows as T[];
  } finally {
    await pg.end();
  }
}

describe('OR-4: input items, DELETE, compaction', () => {
  it("input_items: the previous response's items then its own, the last first; pages by after; the SDK's iterator", async () => {
    const one = await client.responses.create({ model: LLM, input: 'First' });
    const two = await client.responses.create({
      model: LLM,
      previous_response_id: one.id,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Second' }] }],
    });
    const page = await client.responses.inputItems.list(two.id);
    const texts = page.data.map((item) => {
      const message = item as OpenAI.Responses.ResponseInputMessageItem;
      return [message.role, (message.content[0] as { text: string }).text];
    });
    expect(texts).toEqual([
      ['user', 'Second'],
      ['assistant', 'Echo: First'],
      ['user', 'First'],
    ]);
    expect(page.data.every((item) => typeof item.id === 'string' && item.id !== '')).toBe(true);
    const asc = await client.responses.inputItems.list(two.id, { order: 'asc', limit: 2 });
    expect(asc.data.map((i) => i.id)).toEqual([page.data[2]!.id, page.data[1]!.id]);
    expect(asc.has_more).toBe(true);
    const all: string[] = [];
    for await (const item of client.responses.inputItems.list(two.id, { order: 'asc', limit: 1 }))
      all.push(item.id);
    expect(all).toEqual([...page.data].reverse().map((i) => i.id));
  });

  it('DELETE: the deletion object; then GET and input_items 404 and previous_response_id 400; the content is gone, the record stays', async () => {
    const done = await client.responses.create({ model: LLM, input: 'Delete me' });
    const deleted = await client.responses.delete(done.id).asResponse();
    expect(await deleted.json()).toEqual({ id: done.id, object: 'response.deleted', deleted: true });
    expect(await asError(client.responses.retrieve(done.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await asError(client.responses.inputItems.list(done.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await asError(client.responses.delete(done.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const err = await asError(
      client.responses.create({ model: LLM, input: 'x', previous_response_id: done.id }),
    );
    expect(err?.code).toBe('previous_response_not_found');
    expect(await sql('select id from execution_payloads where execution_id = $1', [done.id])).toEqual([]);
    const [record] = await sql<{ status: string; deleted: boolean }>(
      'select status, deleted_at is not null as deleted from executions where id = $1',
      [done.id],
    );
    expect(record).toEqual({ status: 'succeeded', deleted: true });
  });

  it('DELETE of a running response cancels it first (DX-3): the model request is aborted', async () => {
    fake.script(MODEL, { text: scriptedAnswer(200), deltaDelayMs: 100 });
    const created = await client.responses.create({ model: LLM, input: 'Long', background: true });
    const call = await until(() => fake.requestsFor(MODEL)[0], { what: 'the model call' });
    await client.responses.delete(created.id);
    await until(() => call.closedAt, { what: 'the model request to close' });
    expect(call.aborted).toBe(true);
    const [record] = await sql<{ status: string }>('select status from executions where id = $1', [
      created.id,
    ]);
    expect(record!.status).toBe('cancelled');
  });

  it("compact: the provider's compaction of the previous response and the input, its items as given; 400 without model", async () => {
    const earlier = await client.responses.create({ model: LLM, input: 'Remember cobalt.' });
    const compacted = await client.responses.compact({
      model: LLM,
      previous_response_id: earlier.id,
      input: [{ role: 'user', content: 'And now?' }],
      prompt_cache_key: 'cache-1',
    });
    expect(compacted).toMatchObject({
      object: 'response.compaction',
      usage: { input_tokens: 3, total_tokens: 4 },
    });
    expect(compacted.output.map((item) => item.type)).toEqual(['message', 'message', 'compaction']);
    const sent = fake.requests.at(-1)!.body;
    expect(sent).toMatchObject({ model: MODEL, prompt_cache_key: 'cache-1' });
    expect(sent.input).toEqual([
      expect.objectContaining({ role: 'user', content: 'Remember cobalt.' }),
      expect.objectContaining({ role: 'assistant' }),
      expect.objectContaining({ role: 'user', content: 'And now?' }),
    ]);
    // Agentry's own item ids stay home: no provider knows them.
    expect((sent.input as { id?: string }[]).some((item) => item.id !== undefined)).toBe(false);
    const compaction = compacted.output[2] as { encrypted_content: string };
    const dropped = JSON.parse(Buffer.from(compaction.encrypted_content, 'base64').toString('utf8'));
    expect(dropped[0].content[0].text).toBe('Echo: Remember cobalt.');
    // The compacted items continue the conversation as the next create's input.
    const next = await client.responses.create({
      model: LLM,
      input: [...compacted.output, { role: 'user', content: 'Continue.' }] as OpenAI.Responses.ResponseInput,
    });
    expect(next.output_text).toBe('Echo: Continue.');
    const missing = await asError(client.post('/responses/compact', { body: { input: 'hi' } }));
    expect(missing?.status).toBe(400);
    expect(missing?.error).toMatchObject({ param: 'model', code: 'missing_required_parameter' });
  });
});

/** A GET exactly as openai-go's GetStreaming sends it: the JSON body framed by Content-Length, no content type. */
function goStyleGet(path: string, body: string): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${stack.admin.baseUrl}${path}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${bearer}`, 'content-length': Buffer.byteLength(body) },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, type: res.headers['content-type'] ?? '', text }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe("the Go SDK's resume and bad input", () => {
  it('GET /v1/responses/{id}?starting_after=N with the body {"stream":true} and no content type streams the events after N', async () => {
    const answer = scriptedAnswer(12);
    fake.script(MODEL, { text: answer, deltaDelayMs: 20 });
    const created = await client.responses.create({ model: LLM, input: 'Stream', background: true });
    const streamed = await goStyleGet(`/v1/responses/${created.id}?starting_after=3`, '{"stream":true}');
    expect(streamed.status).toBe(200);
    expect(streamed.type).toContain('text/event-stream');
    const events = parseSse(streamed.text).flatMap((m) =>
      m.data && m.data !== '[DONE]' ? [JSON.parse(m.data)] : [],
    );
    expect(events[0].sequence_number).toBe(4);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i + 4));
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { output_text: answer } });
    const whole = await goStyleGet(`/v1/responses/${created.id}`, '');
    expect(whole.type).toContain('application/json');
    expect(JSON.parse(whole.text)).toMatchObject({ id: created.id, status: 'completed' });
    const wrong = await goStyleGet(`/v1/responses/${created.id}`, '{"stream":"yes"}');
    expect([wrong.status, JSON.parse(wrong.text).error.param]).toEqual([400, 'stream']);
  });

  it.each([
    [{ input: [{ role: 'bot', content: 'x' }] }, 'input[0].role', 'invalid_value'],
    [
      { input: [{ role: 'user', content: [{ type: 'input_text' }] }] },
      'input[0].content[0].text',
      'missing_required_parameter',
    ],
    [{ input: [{ type: 'function_call', call_id: 'c' }] }, 'input[0].name', 'missing_required_parameter'],
    [{ input: 'x', tools: [{ type: 'function' }] }, 'tools[0].name', 'missing_required_parameter'],
    [{ input: 'x', temperature: 3 }, 'temperature', 'invalid_value'],
    [{ input: 'x', inputs: 'typo' }, 'inputs', 'unknown_parameter'],
    [{ input: 'x', conversation: 'conv_1' }, 'conversation', 'unsupported_parameter'],
    [{ input: 'x', background: true, store: false }, 'store', 'unsupported_parameter'],
    [{ input: 'x', metadata: { n: 1 } }, 'metadata.n', 'invalid_type'],
    [{}, 'input', 'missing_required_parameter'],
  ])('400 naming the field: %j → %s', async (fields, param, code) => {
    const err = await asError(client.post('/responses', { body: { model: LLM, ...fields } }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err!.error).toMatchObject({ param, code, type: 'invalid_request_error' });
    expect(fake.requests).toHaveLength(0);
  });

  it('a create without model is missing_required_parameter; an unknown LLM a 404', async () => {
    const missing = await asError(client.post('/responses', { body: { input: 'x' } }));
    expect(missing?.error).toMatchObject({ param: 'model', code: 'missing_required_parameter' });
    expect(await asError(client.responses.create({ model: 'no-such-llm', input: 'x' }))).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it('/openapi.json documents the routes of issue 34 and the plain create', async () => {
    const doc = (await stack.admin.get('/openapi.json')).body;
    expect(doc.paths['/v1/responses/{id}'].delete.responses['200']).toBeDefined();
    expect(doc.paths['/v1/responses/{id}/input_items'].get).toBeDefined();
    expect(
      doc.paths['/v1/responses/compact'].post.requestBody.content['application/json'].schema.required,
    ).toEqual(['model']);
    const create = doc.paths['/v1/responses'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(create.properties)).toEqual(
      expect.arrayContaining(['input', 'previous_response_id', 'tools']),
    );
    const object = doc.paths['/v1/responses'].post.responses['200'].content['application/json'].schema;
    expect(object.required).toEqual(expect.arrayContaining(['previous_response_id', 'service_tier', 'user']));
  });
});
