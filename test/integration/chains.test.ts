// SPEC §13 through the API with a real worker and the fake model server: stored chains (CH-1),
// the seed's Document Processing Chain end to end (CH-2, CH-3), trace context and step records
// (CH-5), guardrails (CH-4), stopOnError, unresolved variables, DX-4 and DX-5 on chain execute.
import type { Payload } from '@temporalio/common';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { answerOf, parseNdjson, type Api } from '../helpers/http';
import { startStack, type Stack } from '../helpers/stack';
import { until, waitFor } from '../helpers/wait';

let stack: Stack;
let fake: FakeModelServer;
const llms: Record<string, string> = {};

const INTAKE = '### Intake Summary: VeriPharma, high risk, KYC pending';
const DECISION = '### Compliance Decision: escalate';
const FINAL = '### Final Summary: escalated for review';

async function llm(model: string): Promise<string> {
  const res = await stack.api.post('/llms', { name: model, endpoint: fake.url, model, api_key: 'sk-x' });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function prompt(promptId: string, userPrompt: string, model: string): Promise<void> {
  const res = await stack.api.post('/api/v1/prompts', {
    promptId,
    name: promptId,
    userPrompt,
    customGatewayId: llms[model],
  });
  expect(res.status).toBe(201);
}

const createChain = (body: Record<string, unknown>, api: Api = stack.api) => api.post('/api/v1/chains', body);
const execute = (
  chainId: string,
  body: unknown,
  headers: Record<string, string> = {},
  api: Api = stack.api,
) => api.post(`/api/v1/chains/${chainId}/execute`, body, headers);

/** The text of the last user message the fake model received. */
function userText(body: Record<string, unknown>): string {
  const input = body.input as { role: string; content: string | { type: string; text?: string }[] }[];
  const user = input.filter((m) => m.role === 'user').pop()!;
  return typeof user.content === 'string'
    ? user.content
    : user.content.flatMap((c) => (c.text === undefined ? [] : [c.text])).join('\n');
}

/** Every payload of a workflow's history decoded with the codec, as an operator's UI shows it. */
async function decodedHistory(workflowId: string): Promise<string> {
  const history = await stack.temporal.workflow.getHandle(workflowId).fetchHistory();
  const payloads: Payload[] = [];
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object' || ArrayBuffer.isView(v)) return;
    if ('metadata' in v && 'data' in v) payloads.push(v as Payload);
    else Object.values(v).forEach(walk);
  };
  walk(history);
  expect(payloads.length).toBeGreaterThan(0);
  const decoded = await stack.rt.codec.decode(payloads);
  return decoded.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8')).join('\n');
}

async function key(permissions: string[]): Promise<Api> {
  const res = await stack.api.post('/api_keys', { name: `k-${Math.random()}`, permissions });
  expect(res.status).toBe(201);
  return stack.api.as({ id: res.body.id, secret: res.body.secret });
}

const SEED_CHAIN = {
  name: 'Document Processing Chain',
  description: 'Intake → Policy Review → Summary',
  steps: [
    { order: 1, promptId: 'chain.document-intake', outputVariable: 'intake_summary' },
    { order: 2, promptId: 'chain.policy-check', variables: { summary: '{{intake_summary}}' } },
    { order: 3, promptId: 'chain.summary' },
  ],
  tags: ['chain', 'documents'],
  stopOnError: true,
  maxConcurrency: 1,
  metadata: { department: 'compliance' },
};

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  for (const model of ['gpt-4o-mini', 'claude-3-sonnet', 'gpt-4o', 'slow', 'flaky'])
    llms[model] = await llm(model);
  await prompt(
    'chain.document-intake',
    'Summarise the intake documents of {{company_name}} (risk tier {{risk_tier}}).',
    'gpt-4o-mini',
  );
  await prompt(
    'chain.policy-check',
    'Check this summary against the policy:\n{{summary}}',
    'claude-3-sonnet',
  );
  await prompt('chain.summary', 'Write the final summary.', 'gpt-4o');
  await prompt('chain.slow', 'Take your time.', 'slow');
  await prompt('chain.flaky', 'Answer if you can.', 'flaky');
  await prompt('chain.needs-var', 'Rate {{vendor}} for {{company_name}}.', 'gpt-4o');
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => {
  fake.reset();
  fake.script('gpt-4o-mini', { text: INTAKE, usage: { input_tokens: 812, output_tokens: 350 } });
  fake.script('claude-3-sonnet', { text: DECISION, usage: { input_tokens: 540, output_tokens: 210 } });
  fake.script('gpt-4o', { text: FINAL, usage: { input_tokens: 100, output_tokens: 40 } });
});

describe('CH-1 stored chains', () => {
  it('CH-1 seed 002: create answers the seed shape; get and list add the definition', async () => {
    const res = await createChain(SEED_CHAIN);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      chainId: expect.stringMatching(/^chain_[0-9a-f]{24}$/),
      name: 'Document Processing Chain',
      stepsCount: 3,
      settings: { stopOnError: true, maxConcurrency: 1 },
      usage: { totalExecutions: 0, lastExecutedAt: null },
    });
    const got = await stack.api.get(`/api/v1/chains/${res.body.chainId}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      ...res.body,
      description: 'Intake → Policy Review → Summary',
      steps: SEED_CHAIN.steps,
      tags: ['chain', 'documents'],
      metadata: { department: 'compliance' },
      guardrails: { rateLimitPerMinute: null, maxTokensPerExecution: null },
    });
    const list = await stack.api.get('/api/v1/chains');
    expect(list.status).toBe(200);
    expect(list.body.chains.map((c: any) => c.chainId)).toContain(res.body.chainId);
  });

  it('CH-1: defaults stopOnError true and maxConcurrency 1; steps are kept in ascending order', async () => {
    const res = await createChain({
      name: 'reversed',
      steps: [
        { order: 20, promptId: 'chain.summary' },
        { order: 10, promptId: 'chain.document-intake' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.settings).toEqual({ stopOnError: true, maxConcurrency: 1 });
    const got = await stack.api.get(`/api/v1/chains/${res.body.chainId}`);
    expect(got.body.steps.map((s: any) => s.order)).toEqual([10, 20]);
  });

  it('CH-1: unknown or unreadable prompts, duplicate orders, bad bodies and too many steps → 400', async () => {
    const unknown = await createChain({
      name: 'x',
      steps: [
        { order: 1, promptId: 'chain.summary' },
        { order: 2, promptId: 'no.such-prompt' },
      ],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      success: false,
      error: 'Invalid chain steps: steps[1] (order 2): prompt no.such-prompt not found',
      details: [{ order: 2, promptId: 'no.such-prompt', reason: 'Prompt no.such-prompt not found' }],
    });

    const duplicate = await createChain({
      name: 'x',
      steps: [
        { order: 1, promptId: 'chain.summary' },
        { order: 1, promptId: 'chain.document-intake' },
      ],
    });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.error).toBe(
      'Step orders must be unique: steps[1].order 1 is already used by steps[0]',
    );

    const tooMany = await createChain({
      name: 'x',
      steps: Array.from({ length: 51 }, (_, i) => ({ order: i, promptId: 'chain.summary' })),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toContain('50');

    for (const body of [
      { name: 'x', steps: [] },
      { name: 'x', steps: [{ order: 1.5, promptId: 'chain.summary' }] },
      { name: 'x', steps: [{ order: 1, promptId: 'chain.summary', extra: true }] },
      { name: 'x', steps: [{ order: 1, promptId: 'chain.summary' }], stopOnErrors: false },
      { name: 'x', steps: [{ order: 1, promptId: 'chain.summary', outputVariable: 'not valid' }] },
      { name: 'x', steps: [{ order: 1, promptId: 'chain.summary' }], maxConcurrency: 0 },
      { name: 'x', steps: [{ order: 1, promptId: 'chain.summary' }], guardrails: { maxTokens: 5 } },
      {
        name: 'x',
        steps: [{ order: 1, promptId: 'chain.summary' }],
        metadata: { stepAttachments: { '2': [{ type: 'url', url: 'https://example.com/a.pdf' }] } },
      },
      {
        name: 'x',
        steps: [{ order: 1, promptId: 'chain.summary' }],
        metadata: { stepAttachments: { '1': [{ type: 'ftp', url: 'x' }] } },
      },
    ]) {
      const res = await createChain(body);
      expect({ body, status: res.status, success: res.body.success }).toEqual({
        body,
        status: 400,
        success: false,
      });
    }
  });

  it('CH-1: creating needs execute:chains (403); prompts must be readable by the key; grants name the chainId', async () => {
    const reader = await key(['read:chains', 'read:prompts']);
    const denied = await createChain(SEED_CHAIN, reader);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      success: false,
      error: 'API key lacks execute:chains permission to create chains',
    });

    const blind = await key(['execute:chains']);
    const unreadable = await createChain(SEED_CHAIN, blind);
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.details).toHaveLength(3);

    const author = await key(['execute:chains', 'read:prompts']);
    const created = await createChain(SEED_CHAIN, author);
    expect(created.status).toBe(201);
    const chainId = created.body.chainId;
    // The owner reads its chain; another key sees nothing until granted read on that chainId.
    expect((await author.get(`/api/v1/chains/${chainId}`)).status).toBe(200);
    const other = await key(['read:prompts']);
    expect((await other.get(`/api/v1/chains/${chainId}`)).status).toBe(404);
    expect((await other.get('/api/v1/chains')).body.chains).toEqual([]);
    const granted = await key([`read:chains:${chainId}`]);
    expect((await granted.get('/api/v1/chains')).body.chains.map((c: any) => c.chainId)).toEqual([chainId]);
    // Reading is not executing, nor deleting.
    expect((await execute(chainId, { inputs: {} }, {}, granted)).status).toBe(403);
    expect((await granted.delete(`/api/v1/chains/${chainId}`)).status).toBe(403);
  });

  it('CH-1: a prompt used by a chain cannot be deleted until the chain is; bad chain ids are 404', async () => {
    await prompt('chain.temporary', 'temporary', 'gpt-4o');
    const chain = await createChain({ name: 'temp', steps: [{ order: 1, promptId: 'chain.temporary' }] });
    const refused = await stack.api.delete('/api/v1/prompts/chain.temporary');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain(`chain ${chain.body.chainId}`);
    const deleted = await stack.api.delete(`/api/v1/chains/${chain.body.chainId}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await stack.api.get(`/api/v1/chains/${chain.body.chainId}`)).status).toBe(404);
    expect((await stack.api.delete('/api/v1/prompts/chain.temporary')).status).toBe(204);
    for (const id of ['nope', 'chain_123', chain.body.chainId]) {
      expect((await stack.api.get(`/api/v1/chains/${id}`)).status).toBe(404);
      expect((await execute(id, { inputs: {} })).status).toBe(404);
    }
  });
});

describe('CH-2/CH-3 the Document Processing Chain', () => {
  let chainId: string;
  beforeAll(async () => {
    chainId = (
      await createChain({
        ...SEED_CHAIN,
        metadata: {
          department: 'compliance',
          stepAttachments: { '2': [{ type: 'file', fileId: 'file_policy_2024' }] },
        },
      })
    ).body.chainId;
  });

  it('CH-2, CH-3 seed 002: three steps in order, the context, summed tokens, the seed shape', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await execute(
      chainId,
      {
        inputs: { company_name: 'VeriPharma', risk_tier: 'HIGH' },
        attachments: [{ type: 'url', url: 'https://example.com/docs/kyc/veripharm.pdf' }],
        options: { stopOnError: true },
      },
      { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    );
    expect(res.status).toBe(200);
    const chainExecutionId = res.body.chainExecutionId;
    expect(res.headers.get('x-agentry-execution-id')).toBe(chainExecutionId);
    expect(res.body).toEqual({
      chainId,
      chainExecutionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'SUCCESS',
      steps: [
        {
          order: 1,
          promptId: 'chain.document-intake',
          status: 'SUCCESS',
          providerName: 'custom',
          providerModel: 'gpt-4o-mini',
          response: INTAKE,
          usage: { promptTokens: 812, completionTokens: 350 },
        },
        {
          order: 2,
          promptId: 'chain.policy-check',
          status: 'SUCCESS',
          providerName: 'custom',
          providerModel: 'claude-3-sonnet',
          response: DECISION,
          usage: { promptTokens: 540, completionTokens: 210 },
        },
        {
          order: 3,
          promptId: 'chain.summary',
          status: 'SUCCESS',
          providerName: 'custom',
          providerModel: 'gpt-4o',
          response: FINAL,
          usage: { promptTokens: 100, completionTokens: 40 },
        },
      ],
      context: { intake_summary: INTAKE },
      tokens: { promptTokens: 1452, completionTokens: 600, totalTokens: 2052 },
      errors: [],
      elapsedMs: expect.any(Number),
    });
    expect(res.body.elapsedMs).toBeGreaterThan(0);

    // Steps ran in order; inputs reached step 1, step 1's answer reached step 2 through the
    // step variable; attachments are a block on every step, with the step's own added.
    expect(fake.requests.map((r) => r.model)).toEqual(['gpt-4o-mini', 'claude-3-sonnet', 'gpt-4o']);
    const [intake, policy, summary] = fake.requests.map((r) => userText(r.body));
    expect(intake).toBe(
      'Summarise the intake documents of VeriPharma (risk tier HIGH).\n\nAttachments:\n' +
        '- url: https://example.com/docs/kyc/veripharm.pdf',
    );
    expect(policy).toBe(
      `Check this summary against the policy:\n${INTAKE}\n\nAttachments:\n` +
        '- url: https://example.com/docs/kyc/veripharm.pdf\n- file: file_policy_2024',
    );
    expect(summary).toContain('Write the final summary.\n\nAttachments:\n- url: https://example.com');
    expect(summary).not.toContain('file_policy_2024');
    expect(JSON.stringify(fake.requests[0]!.body.input)).toContain('input_file');

    // CH-5, PC-11: each step is an internal execution of the chain with trace context.
    const records = await stack.rt
      .db('executions')
      .where({ parent_execution_id: chainExecutionId })
      .orderBy('started_at');
    expect(records).toHaveLength(3);
    const spans = new Set<string>();
    records.forEach((r: any, i: number) => {
      expect(r).toMatchObject({
        kind: 'chain_step',
        status: 'succeeded',
        is_internal: true,
        chain_id: chainId,
        chain_depth: 1,
        referenced_prompt_id: SEED_CHAIN.steps[i]!.promptId,
        metadata: {
          chainExecutionId,
          chainStep: i + 1,
          traceId,
          spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
          traceparent: `00-${traceId}-${r.metadata.spanId}-01`,
        },
      });
      spans.add(r.metadata.spanId);
    });
    expect(spans.size).toBe(3);
    const chainRecord = await stack.api.get(`/executions/${chainExecutionId}`);
    expect(chainRecord.body).toMatchObject({
      kind: 'chain',
      status: 'succeeded',
      usage: { input_tokens: 1452, output_tokens: 600 },
    });
    expect(JSON.parse(chainRecord.body.answer)).toEqual(res.body);
    // DX-2: re-attaching to the chain yields the report as its text.
    const events = parseNdjson((await stack.api.get(`/executions/${chainExecutionId}/stream`)).text);
    expect(JSON.parse(answerOf(events))).toEqual(res.body);
    expect(events[events.length - 1]).toMatchObject({ type: 'done', usage: { input_tokens: 1452 } });

    // §9.3: history holds ids and figures, never the inputs, variables, answers or the report,
    // even decoded.
    for (const workflowId of [chainExecutionId, records[1].id].map((id) => `execution-${id}`)) {
      const text = await decodedHistory(workflowId);
      expect(text).toContain(chainId);
      for (const content of ['VeriPharma', 'Intake Summary', 'Compliance Decision', 'kyc/veripharm.pdf'])
        expect(text).not.toContain(content);
    }

    // DX-5: the chain and its steps carry ChainId in Temporal.
    const described = await stack.temporal.workflow.getHandle(`execution-${records[0].id}`).describe();
    expect(described.searchAttributes.ChainId).toEqual([chainId]);

    // CH-1: usage follows executions.
    const chain = await stack.api.get(`/api/v1/chains/${chainId}`);
    expect(chain.body.usage.totalExecutions).toBe(1);
    expect(Date.parse(chain.body.usage.lastExecutedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('CH-2: the body is validated strictly; an input may be a number; missing inputs fail the step', async () => {
    for (const body of [
      { inputs: { company_name: 'x' }, extra: 1 },
      { inputs: { 'bad name': 'x' } },
      { inputs: { company_name: { nested: true } } },
      { inputs: {}, options: { stopOnErrors: true } },
      { inputs: {}, attachments: [{ type: 'url', url: 'ftp://x' }] },
      [],
    ]) {
      const res = await execute(chainId, body);
      expect({ body, status: res.status, success: res.body.success }).toEqual({
        body,
        status: 400,
        success: false,
      });
    }
    expect(fake.requests).toHaveLength(0);

    const res = await execute(chainId, { inputs: { company_name: 'Acme', risk_tier: 3 } });
    expect(res.status).toBe(200);
    expect(res.body.steps[0]).toMatchObject({ status: 'SUCCESS', response: INTAKE });
    expect(userText(fake.requests[0]!.body)).toBe('Summarise the intake documents of Acme (risk tier 3).');

    fake.reset();
    const missing = await execute(chainId, { inputs: { company_name: 'Acme' } });
    expect(missing.status).toBe(200);
    expect(missing.body.status).toBe('FAILED');
    expect(missing.body.steps.map((s: any) => s.status)).toEqual(['FAILED', 'SKIPPED', 'SKIPPED']);
    expect(missing.body.steps[0].error).toBe('Unresolved variable(s): risk_tier');
    expect(missing.body.errors).toEqual([
      { order: 1, promptId: 'chain.document-intake', error: 'Unresolved variable(s): risk_tier' },
    ]);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('CH-2/CH-3 failures: stopOnError, PARTIAL, unresolved variables', () => {
  const flakyChain = {
    name: 'flaky middle',
    steps: [
      { order: 1, promptId: 'chain.summary', outputVariable: 'first' },
      { order: 2, promptId: 'chain.flaky' },
      { order: 3, promptId: 'chain.policy-check', variables: { summary: '{{first}}' } },
    ],
  };

  it('CH-3: with stopOnError the first failed step ends the chain FAILED and later steps are SKIPPED', async () => {
    const chainId = (await createChain(flakyChain)).body.chainId;
    fake.script('flaky', { failFirst: { count: 100, status: 400, message: 'Unsupported input' } });
    const res = await execute(chainId, { inputs: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'FAILED',
      steps: [{ status: 'SUCCESS' }, { status: 'FAILED' }, { status: 'SKIPPED' }],
    });
    expect(res.body.steps[1]).toMatchObject({
      providerName: null,
      providerModel: null,
      response: null,
      usage: { promptTokens: 0, completionTokens: 0 },
      error: expect.stringContaining('Model server failed: 400'),
    });
    expect(res.body.errors).toEqual([{ order: 2, promptId: 'chain.flaky', error: res.body.steps[1].error }]);
    expect(res.body.tokens).toEqual({ promptTokens: 100, completionTokens: 40, totalTokens: 140 });
    expect(fake.requestsFor('claude-3-sonnet')).toHaveLength(0);
    const record = await stack.api.get(`/executions/${res.body.chainExecutionId}`);
    expect(record.body).toMatchObject({ status: 'failed', error: { status: 502, type: 'Chain.StepFailed' } });
  });

  it('CH-3: without stopOnError (request option over the chain) failed steps are reported and the chain is PARTIAL', async () => {
    const chainId = (await createChain(flakyChain)).body.chainId;
    fake.script('flaky', { failFirst: { count: 100, status: 400 } });
    const res = await execute(chainId, { inputs: {}, options: { stopOnError: false } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'PARTIAL' });
    expect(res.body.steps.map((s: any) => s.status)).toEqual(['SUCCESS', 'FAILED', 'SUCCESS']);
    expect(res.body.steps[2].response).toBe(DECISION);
    expect(userText(fake.requestsFor('claude-3-sonnet')[0]!.body)).toContain(FINAL);
    expect(res.body.errors.map((e: any) => e.order)).toEqual([2]);
    const record = await stack.api.get(`/executions/${res.body.chainExecutionId}`);
    expect(record.body.status).toBe('succeeded');
  });

  it('CH-2: Unresolved variable(s) fails the step: a prompt variable found nowhere, or a step template', async () => {
    const chainId = (
      await createChain({
        name: 'unresolved',
        stopOnError: false,
        steps: [
          { order: 1, promptId: 'chain.needs-var' },
          {
            order: 2,
            promptId: 'chain.policy-check',
            variables: { summary: '{{missing_output}} and {{other}}' },
          },
          { order: 3, promptId: 'chain.needs-var', variables: { vendor: 'Globex ({{company_name}})' } },
        ],
      })
    ).body.chainId;
    const res = await execute(chainId, { inputs: { company_name: 'Acme' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'PARTIAL' });
    expect(res.body.steps.map((s: any) => [s.status, s.error])).toEqual([
      ['FAILED', 'Unresolved variable(s): vendor'],
      ['FAILED', 'Unresolved variable(s): missing_output, other'],
      ['SUCCESS', undefined],
    ]);
    // Step variables resolve first, then inputs; a value is not expanded again.
    expect(fake.requests.map((r) => userText(r.body))).toEqual(['Rate Globex (Acme) for Acme.']);
  });

  it('DX-3: cancelling a running chain cancels its step; the execute answer is 499 and nothing runs after', async () => {
    // 100 words, 300 ms apart: the stream would run 30 s, so only the cancel ends it early.
    fake.script('slow', {
      text: 'one two three four five six seven eight nine ten '.repeat(10),
      deltaDelayMs: 300,
    });
    const chainId = (
      await createChain({
        name: 'cancellable',
        steps: [
          { order: 1, promptId: 'chain.slow' },
          { order: 2, promptId: 'chain.summary' },
        ],
      })
    ).body.chainId;
    const pending = execute(chainId, { inputs: {} });
    const step = await until(
      () => stack.rt.db('executions').where({ chain_id: chainId, kind: 'chain_step' }).first(),
      { what: 'the chain step record' },
    );
    await waitFor(() => fake.requestsFor('slow').length > 0, { what: 'the step model request' });
    const cancel = await stack.api.delete(`/executions/${step.parent_execution_id}`);
    expect(cancel.status).toBe(202);
    const res = await pending;
    expect(res.status).toBe(499);
    expect(res.body).toEqual({ success: false, error: 'Execution cancelled' });
    const records = await stack.rt.db('executions').where({ chain_id: chainId }).orderBy('started_at');
    expect(records.map((r: any) => [r.kind, r.status])).toEqual([
      ['chain', 'cancelled'],
      ['chain_step', 'cancelled'],
    ]);
    // DX-3: the model request is aborted (the activity learns it from its heartbeat; how soon is
    // measured in test/integration/executions.test.ts).
    await waitFor(() => fake.requestsFor('slow')[0]!.aborted, {
      what: 'the step model request to be aborted',
    });
    expect(fake.requestsFor('gpt-4o')).toHaveLength(0);
  });

  it('CH-2: no routing and no default LLM → 400 before anything runs', async () => {
    const unrouted = await stack.api.post('/api/v1/prompts', {
      promptId: 'chain.unrouted',
      name: 'unrouted',
      userPrompt: 'hello',
    });
    expect(unrouted.status).toBe(201);
    const chainId = (
      await createChain({ name: 'unrouted', steps: [{ order: 5, promptId: 'chain.unrouted' }] })
    ).body.chainId;
    const res = await execute(chainId, { inputs: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(
      'No LLM for step(s) 5 (prompt chain.unrouted): the prompt has no routing and AGENTRY_DEFAULT_LLM_ID is not set',
    );
    expect((await stack.api.get(`/api/v1/chains/${chainId}`)).body.usage.totalExecutions).toBe(0);
  });
});

describe('CH-4 guardrails', () => {
  const violation = (reason: string) => ({
    success: false,
    error: 'Chain guardrail violation',
    details: [{ reason }],
  });

  it('CH-4: maxConcurrency holds under concurrent requests (exactly N run, the rest 429)', async () => {
    fake.script('slow', { text: 'one two three four five six', deltaDelayMs: 200 });
    const chainId = (
      await createChain({ name: 'slow', maxConcurrency: 2, steps: [{ order: 1, promptId: 'chain.slow' }] })
    ).body.chainId;
    const results = await Promise.all(Array.from({ length: 5 }, () => execute(chainId, { inputs: {} })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    for (const refused of results.filter((r) => r.status === 429)) {
      expect(refused.body).toEqual(violation('maxConcurrency'));
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(fake.requestsFor('slow')).toHaveLength(2);
    // Once they finished, the chain runs again; refused executions are not counted as usage.
    expect((await execute(chainId, { inputs: {} })).status).toBe(200);
    expect((await stack.api.get(`/api/v1/chains/${chainId}`)).body.usage.totalExecutions).toBe(3);
  });

  it('CH-4: rateLimitPerMinute refuses the executions beyond it with Retry-After', async () => {
    const chainId = (
      await createChain({
        name: 'rate',
        maxConcurrency: 10,
        guardrails: { rateLimitPerMinute: 2 },
        steps: [{ order: 1, promptId: 'chain.summary' }],
      })
    ).body.chainId;
    expect((await execute(chainId, { inputs: {} })).status).toBe(200);
    expect((await execute(chainId, { inputs: {} })).status).toBe(200);
    const refused = await execute(chainId, { inputs: {} });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(violation('rateLimit'));
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(fake.requests).toHaveLength(2);
  });

  it('CH-4: a running execution whose tokens pass maxTokensPerExecution is stopped → 429 maxTokens', async () => {
    const chainId = (
      await createChain({
        ...SEED_CHAIN,
        name: 'capped',
        guardrails: { maxTokensPerExecution: 1000 },
      })
    ).body.chainId;
    const res = await execute(chainId, { inputs: { company_name: 'VeriPharma', risk_tier: 'HIGH' } });
    expect({ status: res.status, body: res.body }).toEqual({ status: 429, body: violation('maxTokens') });
    // Step 1 used 1162 tokens: the chain stopped before step 2.
    expect(fake.requests.map((r) => r.model)).toEqual(['gpt-4o-mini']);
    const executionId = res.headers.get('x-agentry-execution-id')!;
    const record = await stack.api.get(`/executions/${executionId}`);
    expect(record.body).toMatchObject({
      kind: 'chain',
      status: 'failed',
      error: { status: 429, type: 'Chain.GuardrailViolation' },
      usage: { input_tokens: 812, output_tokens: 350 },
    });
    const report = JSON.parse(record.body.answer);
    expect(report.status).toBe('FAILED');
    expect(report.steps.map((s: any) => s.status)).toEqual(['SUCCESS', 'SKIPPED', 'SKIPPED']);
    expect(report.errors[0].error).toContain('maxTokens');
  });
});

describe('DX-4 Idempotency-Key on chain execute', () => {
  it('DX-4: a repeat attaches to the same chain execution (no second model call); another body → 409', async () => {
    const chainId = (await createChain({ name: 'idem', steps: [{ order: 1, promptId: 'chain.summary' }] }))
      .body.chainId;
    const headers = { 'Idempotency-Key': 'chain-run-1' };
    const first = await execute(chainId, { inputs: { a: '1' } }, headers);
    const again = await execute(chainId, { inputs: { a: '1' } }, headers);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(fake.requests).toHaveLength(1);
    expect((await execute(chainId, { inputs: { a: '2' } }, headers)).status).toBe(409);
    expect((await stack.api.get(`/api/v1/chains/${chainId}`)).body.usage.totalExecutions).toBe(1);
  });
});

describe('CH-4 review cases', () => {
  it('CH-4: a running record whose workflow no longer exists does not hold a concurrency slot forever', async () => {
    await prompt('chain.orphan-step', 'Say ok', 'gpt-4o');
    const chain = await createChain({
      name: 'orphaned',
      steps: [{ order: 1, promptId: 'chain.orphan-step' }],
    });
    const chainId = chain.body.chainId as string;
    const orphan = '01890a5d-ac96-774b-bcce-b302099a8057';
    await stack.rt.db('executions').insert({
      id: orphan,
      kind: 'chain',
      status: 'running',
      api_key_id: stack.env.adminKeyId,
      chain_id: chainId,
      workflow_id: `execution-${orphan}`,
      attempts: 0,
      started_at: new Date(Date.now() - 60_000),
    });
    fake.script('gpt-4o', { text: 'ok' });
    const res = await execute(chainId, { inputs: {} });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('SUCCESS');
    expect(await stack.rt.db('executions').where({ id: orphan }).first('status', 'error_type')).toEqual({
      status: 'failed',
      error_type: 'Infra.Unavailable',
    });
  });

  it("CH-3/CH-4: a step's tokens include those of its EXECUTE references", async () => {
    fake.script('gpt-4o', { text: 'inner answer', usage: { input_tokens: 100, output_tokens: 50 } });
    fake.script('claude-3-sonnet', { text: 'outer answer', usage: { input_tokens: 7, output_tokens: 3 } });
    await prompt('chain.inner', 'Inner question', 'gpt-4o');
    await prompt('chain.outer', 'Outer uses {{prompt:chain.inner|mode=execute}}', 'claude-3-sonnet');
    const chain = await createChain({
      name: 'nested-tokens',
      steps: [{ order: 1, promptId: 'chain.outer' }],
      guardrails: { maxTokensPerExecution: 1000 },
    });
    const res = await execute(chain.body.chainId, { inputs: {} });
    expect(res.status).toBe(200);
    expect(res.body.steps[0].usage).toEqual({ promptTokens: 107, completionTokens: 53 });
    expect(res.body.tokens).toEqual({ promptTokens: 107, completionTokens: 53, totalTokens: 160 });
  });

  it('CH-2: inputs are required; step attachment keys must be canonical orders', async () => {
    await prompt('chain.plain', 'Plain', 'gpt-4o');
    const chain = await createChain({
      name: 'inputs-required',
      steps: [{ order: 1, promptId: 'chain.plain' }],
    });
    expect((await execute(chain.body.chainId, {})).status).toBe(400);
    const odd = await createChain({
      name: 'odd-keys',
      steps: [{ order: 2, promptId: 'chain.plain' }],
      metadata: { stepAttachments: { '02': [{ type: 'url', url: 'https://example.com/a.pdf' }] } },
    });
    expect(odd.status).toBe(400);
    expect(odd.body.error).toMatch(/stepAttachments names no step of the chain: order 02/);
  });
});

describe('§9.3 records before workflows', () => {
  it('DX-1: chain runs started back to back each find their committed record and request', async () => {
    // A workflow started inside the uncommitted admission transaction would fail its first step
    // with "content expired" or end with error Execution.NotFound: run enough chains, four at a
    // time, for the race to show.
    const chainId = (
      await createChain({
        name: 'records-first',
        maxConcurrency: 4,
        steps: [{ order: 1, promptId: 'chain.summary' }],
      })
    ).body.chainId;
    const ids: string[] = [];
    for (let batch = 0; batch < 3; batch++) {
      const results = await Promise.all(Array.from({ length: 4 }, () => execute(chainId, { inputs: {} })));
      for (const res of results) {
        expect({ status: res.status, report: res.body.status }).toEqual({ status: 200, report: 'SUCCESS' });
        ids.push(res.body.chainExecutionId);
      }
    }
    const chains = await stack.rt.db('executions').whereIn('id', ids).select('id', 'status', 'error_type');
    expect(chains).toHaveLength(12);
    for (const { id, status, error_type } of chains) {
      expect({ id, status, error_type }).toEqual({ id, status: 'succeeded', error_type: null });
      const answer = await stack.rt.executions.getAnswer<{ text: string }>(id);
      expect(answer).not.toBeNull();
      expect(answer!.text).not.toContain('Execution content expired');
      expect(answer!.text).toContain(FINAL);
    }
  });
});
