// SPEC §13 on separate API and worker processes (built dist/) against the scripted fake model:
// Temporal's retries carry a chain step through transient model failures, and a model that keeps
// failing stops a stopOnError chain with the later steps SKIPPED (CH-2, CH-3, LLM-3).
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import type { Api } from '../helpers/http';
import { startProcessStack, type ProcessStack } from '../helpers/processes';

let stack: ProcessStack;
let fake: FakeModelServer;
let admin: Api;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  admin = stack.admin;
  for (const model of ['steady', 'flaky']) {
    const llm = await admin.post('/llms', { name: model, endpoint: fake.url, model, api_key: 'sk-x' });
    expect(llm.status).toBe(201);
    const prompt = await admin.post('/api/v1/prompts', {
      promptId: `e2e.${model}`,
      name: model,
      userPrompt: `Step on the ${model} model: {{topic}}`,
      customGatewayId: llm.body.id,
    });
    expect(prompt.status).toBe(201);
  }
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

const chainOf = async (name: string): Promise<string> => {
  const res = await admin.post('/api/v1/chains', {
    name,
    stopOnError: true,
    steps: [
      { order: 1, promptId: 'e2e.steady', outputVariable: 'first' },
      { order: 2, promptId: 'e2e.flaky', variables: { topic: '{{first}}' } },
      { order: 3, promptId: 'e2e.steady' },
    ],
  });
  expect(res.status).toBe(201);
  return res.body.chainId;
};

beforeEach(() => {
  fake.reset();
  fake.script('steady', { text: 'steady answer', usage: { input_tokens: 10, output_tokens: 5 } });
});

describe('CH-2/CH-3 chains through the processes', () => {
  it('CH-2, LLM-3: a step whose model fails twice and then succeeds completes the chain', async () => {
    fake.script('flaky', {
      text: 'recovered answer',
      usage: { input_tokens: 20, output_tokens: 7 },
      failFirst: { count: 2, status: 500 },
    });
    const res = await admin.post(`/api/v1/chains/${await chainOf('retrying')}/execute`, {
      inputs: { topic: 'onboarding' },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('SUCCESS');
    expect(res.body.steps.map((s: any) => [s.status, s.response])).toEqual([
      ['SUCCESS', 'steady answer'],
      ['SUCCESS', 'recovered answer'],
      ['SUCCESS', 'steady answer'],
    ]);
    expect(res.body.context).toEqual({ first: 'steady answer' });
    expect(res.body.tokens).toEqual({ promptTokens: 40, completionTokens: 17, totalTokens: 57 });
    // Two refused attempts and the one that answered, each with step 1's answer as its topic.
    const flaky = fake.requestsFor('flaky');
    expect(flaky).toHaveLength(3);
    for (const request of flaky) expect(JSON.stringify(request.body.input)).toContain('steady answer');
  });

  it('CH-3: a model that keeps failing stops the chain (stopOnError) with the later steps SKIPPED', async () => {
    fake.script('flaky', { failFirst: { count: 1000, status: 503, message: 'overloaded' } });
    const res = await admin.post(`/api/v1/chains/${await chainOf('failing')}/execute`, {
      inputs: { topic: 'onboarding' },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('FAILED');
    expect(res.body.steps.map((s: any) => s.status)).toEqual(['SUCCESS', 'FAILED', 'SKIPPED']);
    expect(res.body.steps[1].error).toBe('Model server failed: 503 overloaded');
    expect(res.body.errors).toEqual([
      { order: 2, promptId: 'e2e.flaky', error: 'Model server failed: 503 overloaded' },
    ]);
    // Every configured attempt was spent (AGENTRY_LLM_MAX_ATTEMPTS=4), and step 3 never ran.
    expect(fake.requestsFor('flaky')).toHaveLength(4);
    expect(fake.requestsFor('steady')).toHaveLength(1);
    const record = await admin.get(`/executions/${res.body.chainExecutionId}`);
    expect(record.body).toMatchObject({ kind: 'chain', status: 'failed', error: { status: 502 } });
  });
});
