// SPEC §7: LLM-2 (messages → Responses API request) and LLM-1 (provider from the endpoint).
import { providerFromEndpoint, toResponsesRequest, type ChatMessage } from '../../domain/llm-request';

describe('toResponsesRequest (LLM-2)', () => {
  it('LLM-2: system messages, in order, joined by a blank line become instructions', () => {
    const req = toResponsesRequest([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hi' },
      { role: 'system', content: 'Answer in French.' },
    ]);
    expect(req.instructions).toBe('You are terse.\n\nAnswer in French.');
    expect(req.input).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('LLM-2: the other messages become input items in their order', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'system', content: 'sys' },
      { role: 'developer', content: 'three' },
      { role: 'user', content: 'four' },
    ];
    expect(toResponsesRequest(messages).input).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'developer', content: 'three' },
      { role: 'user', content: 'four' },
    ]);
  });

  it('LLM-2: the developer role is kept in input, not folded into instructions', () => {
    const req = toResponsesRequest([
      { role: 'developer', content: 'dev' },
      { role: 'user', content: 'q' },
    ]);
    expect(req).not.toHaveProperty('instructions');
    expect(req.input[0]).toEqual({ role: 'developer', content: 'dev' });
  });

  it('LLM-2: no instructions key without system messages', () => {
    const req = toResponsesRequest([{ role: 'user', content: 'q' }]);
    expect(Object.keys(req)).toEqual(['input']);
  });

  it('LLM-2: an empty system message still counts', () => {
    expect(
      toResponsesRequest([
        { role: 'system', content: 'a' },
        { role: 'system', content: '' },
        { role: 'user', content: 'q' },
      ]).instructions,
    ).toBe('a\n\n');
  });

  it('LLM-2: temperature is sent only when the request gave one (0 included)', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'q' }];
    expect(toResponsesRequest(messages)).not.toHaveProperty('temperature');
    expect(toResponsesRequest(messages, undefined)).not.toHaveProperty('temperature');
    expect(toResponsesRequest(messages, 0).temperature).toBe(0);
    expect(toResponsesRequest(messages, 1.3).temperature).toBe(1.3);
  });

  it('LLM-2: input items carry only role and content', () => {
    const extra = { role: 'user', content: 'q', include: true } as ChatMessage;
    expect(toResponsesRequest([extra]).input).toEqual([{ role: 'user', content: 'q' }]);
    expect(Object.keys(toResponsesRequest([extra]).input[0]!)).toEqual(['role', 'content']);
  });
});

describe('providerFromEndpoint (LLM-1)', () => {
  it.each([
    ['https://api.openai.com/v1', 'openai'],
    ['https://API.OpenAI.com/v1/', 'openai'],
    ['https://my-resource.openai.azure.com/openai/v1', 'azure'],
    ['https://gateway.azure-api.net/v1', 'azure'],
    ['https://api.anthropic.com/v1', 'anthropic'],
    ['http://localhost:8080/v1', 'custom'],
    ['http://127.0.0.1:11434/v1', 'custom'],
    ['https://evilopenai.com/v1', 'custom'],
    ['https://api.openai.com.evil.example/v1', 'custom'],
    ['https://notanthropic.com/v1', 'custom'],
    ['https://openai.azure.com.attacker.net/v1', 'custom'],
    ['not a url', 'custom'],
    ['', 'custom'],
  ])('LLM-1: %p → %p', (endpoint, provider) => {
    expect(providerFromEndpoint(endpoint)).toBe(provider);
  });
});
