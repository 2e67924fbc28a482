// Issue 34 (SPEC OR-1, OR-3): items of /v1/responses as Agentry stores them, the checks of a
// continued tool call, and the seam by which a stored request reaches the provider as given
// (`toProviderRequest`) or, for the model call that takes messages only, as chat messages.
import { InvalidInput } from '../../domain/errors';
import {
  chatMessagesOf,
  MODEL_PARAMETERS,
  toProviderRequest,
  type ResponsesModelRequest,
} from '../../domain/llm-request';
import { checkToolOutputs, forProvider, inputItems, type ResponseItem } from '../../domain/response-items';

const UUID = '019a1b2c-3d4e-7f00-8a9b-0123456789ab';
let counter = 0;
const newId = () => `019a1b2c-3d4e-7f00-8a9b-${String(++counter).padStart(12, '0')}`;

function rejection(run: () => unknown): InvalidInput {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInput);
    return err as InvalidInput;
  }
  throw new Error('expected InvalidInput');
}

describe('inputItems', () => {
  it('OR-1: a string is one user message; an item with a role is a message; each gets an Agentry id unless it has one', () => {
    expect(inputItems('Hi', [], newId)).toEqual([
      { type: 'message', role: 'user', content: 'Hi', id: expect.stringMatching(/^msg_019a1b2c-/) },
    ]);
    const items = inputItems(
      [
        { role: 'assistant', content: 'x', phase: 'commentary' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'reasoning', id: 'rs_provider', summary: [] },
        { type: 'web_search_call', status: 'completed' },
      ],
      [],
      newId,
    );
    expect(items.map((i) => [i.type, i.id!.split('_')[0]])).toEqual([
      ['message', 'msg'],
      ['function_call', 'fc'],
      ['reasoning', 'rs'],
      ['web_search_call', 'item'],
    ]);
    expect(items[0]).toMatchObject({ phase: 'commentary', content: 'x' });
    expect(items[2]!.id).toBe('rs_provider');
  });

  it('OR-3: an item_reference becomes the item it names; an unknown one is a 400 naming it', () => {
    const context: ResponseItem[] = [
      { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f', arguments: '{}' },
    ];
    expect(inputItems([{ type: 'item_reference', id: 'fc_1' }], context, newId)).toEqual(context);
    const err = rejection(() =>
      inputItems(
        [
          { role: 'user', content: 'x' },
          { type: 'item_reference', id: 'nope' },
        ],
        context,
        newId,
      ),
    );
    expect(err.items).toEqual([
      { type: 'item_not_found', path: 'input[1].id', message: "Item with id 'nope' not found." },
    ]);
  });
});

describe('checkToolOutputs', () => {
  const call = { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' };
  const output = { type: 'function_call_output', call_id: 'call_1', output: 'ok' };

  it('OR-3: a function_call_output continues a function_call of the context or of the input before it', () => {
    expect(() => checkToolOutputs([call], [output])).not.toThrow();
    expect(() => checkToolOutputs([], [call, output])).not.toThrow();
  });

  it('OR-3: one whose call_id no earlier function_call has is 400 tool_call_not_found, param input', () => {
    for (const [context, input] of [
      [[], [output]],
      [[], [output, call]],
    ] as const) {
      const err = rejection(() => checkToolOutputs(context, input));
      expect(err.items).toEqual([expect.objectContaining({ type: 'tool_call_not_found', path: 'input' })]);
      expect(err.message).toBe('No tool call found for function call output with call_id call_1.');
    }
  });
});

describe('toProviderRequest, the seam of the model call (OR-1)', () => {
  const request: ResponsesModelRequest = {
    context: [
      { type: 'message', id: `msg_${UUID}`, role: 'user', content: 'Earlier' },
      { type: 'reasoning', id: 'rs_provider', encrypted_content: 'opaque', summary: [] },
      {
        type: 'message',
        id: `msg_${UUID}_1`,
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Answer' }],
      },
    ],
    input: [
      {
        type: 'message',
        id: 'msg_client',
        role: 'user',
        content: [{ type: 'input_image', image_url: 'data:image/png;base64,AA' }],
      },
      { type: 'function_call_output', id: `fco_${UUID}`, call_id: 'c1', output: 'ok' },
    ],
    instructions: 'Be terse.',
    tools: [{ type: 'function', name: 'f' }],
    tool_choice: 'required',
    temperature: 0.5,
    top_p: 0.9,
    max_output_tokens: 100,
    reasoning: { effort: 'low' },
    text: { format: { type: 'json_object' } },
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'k',
    metadata: { mine: 'x' },
    store: false,
    background: false,
    previous_response_id: UUID,
  };

  it("passes every parameter given and every item in order, without Agentry's ids or fields", () => {
    const sent = toProviderRequest({ messages: [], responses: request }) as Record<string, unknown>;
    expect(sent.input).toEqual([
      { type: 'message', role: 'user', content: 'Earlier' },
      request.context[1],
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Answer' }] },
      request.input[0],
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    ]);
    const { input: _input, ...parameters } = sent;
    expect(parameters).toEqual({
      instructions: 'Be terse.',
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: 'required',
      temperature: 0.5,
      top_p: 0.9,
      max_output_tokens: 100,
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_object' } },
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
    });
    expect(MODEL_PARAMETERS).not.toContain('metadata');
    expect(forProvider({ type: 'compaction', id: 'cmp_1', encrypted_content: 'e' })).toHaveProperty(
      'id',
      'cmp_1',
    );
  });

  it('LLM-2: content without a Responses request (a direct query, a rendered agent) maps its messages', () => {
    expect(
      toProviderRequest(
        {
          messages: [
            { role: 'system', content: 's' },
            { role: 'user', content: 'u' },
          ],
        },
        0.1,
      ),
    ).toEqual({
      instructions: 's',
      input: [{ role: 'user', content: 'u' }],
      temperature: 0.1,
    });
  });

  it('chatMessagesOf: instructions first, the text and file URLs of messages in order; other items left out', () => {
    const items: ResponseItem[] = [
      ...request.context,
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'a' },
          { type: 'input_file', file_url: 'https://f/x.pdf' },
          { type: 'input_text', text: 'b' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
      ...request.input,
    ];
    expect(chatMessagesOf(items, 'Be terse.')).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'Earlier' },
      { role: 'assistant', content: 'Answer' },
      { role: 'user', content: 'a\nb', fileUrls: ['https://f/x.pdf'] },
      { role: 'assistant', content: 'No.' },
      { role: 'user', content: '' },
    ]);
  });
});
