// SPEC §12 PC-5 on the real API and worker processes: an EXECUTE reference's answer is cached
// (no model call within the cache period) and saving the referenced prompt makes the next
// execution call the model again. The fake model server counts the calls.
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import type { Api } from '../helpers/http';
import { startProcessStack, type ProcessStack } from '../helpers/processes';

let stack: ProcessStack;
let fake: FakeModelServer;
let admin: Api;
let llmId: string;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  admin = stack.admin;
  llmId = (await admin.post('/llms', { name: 'main', endpoint: fake.url, model: 'main', api_key: 'k' })).body
    .id;
  const routed = (
    await admin.post('/llms', { name: 'routed', endpoint: fake.url, model: 'routed', api_key: 'k' })
  ).body.id;
  const saved = await admin.post('/api/v1/prompts', {
    promptId: 'risk_digest',
    name: 'Risk digest',
    userPrompt: 'List the three top risks.',
    customGatewayId: routed,
  });
  expect(saved.status).toBe(201);
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('PC-5 EXECUTE cache across processes', () => {
  it('a cached EXECUTE reference makes no model call; after the prompt is updated it makes one', async () => {
    fake.script('routed', { text: 'Liquidity, fraud, outages.' });
    fake.script('main', { text: 'Report ready.' });
    const run = () =>
      admin.post(
        '/api/gateway/execute',
        { prompt: 'Report on {{prompt:risk_digest}}' },
        { 'x-llm-id': llmId },
      );

    const first = await run();
    expect(first.status).toBe(200);
    expect(first.body.executionChain[0]).toMatchObject({
      promptId: 'risk_digest',
      executionMode: 'EXECUTE',
      response: 'Liquidity, fraud, outages.',
      cached: false,
    });
    expect(fake.requestsFor('routed')).toHaveLength(1);

    const second = await run();
    expect(second.status).toBe(200);
    expect(second.body.executionChain[0]).toMatchObject({
      cached: true,
      response: 'Liquidity, fraud, outages.',
    });
    expect(fake.requestsFor('routed')).toHaveLength(1);
    expect(fake.requestsFor('main')).toHaveLength(2);

    expect(
      (await admin.put('/api/v1/prompts/risk_digest', { userPrompt: 'List the four top risks.' })).status,
    ).toBe(200);
    const third = await run();
    expect(third.body.executionChain[0].cached).toBe(false);
    expect(fake.requestsFor('routed')).toHaveLength(2);
    expect(JSON.stringify(fake.requestsFor('routed')[1]!.body)).toContain('List the four top risks.');
  });
});
