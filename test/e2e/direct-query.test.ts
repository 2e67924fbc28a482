// The README walk-through against the real API and worker processes (built dist/), and the data
// protection promises: no API key secret, LLM key or content in logs or, in plaintext, in the
// Temporal history (SPEC §16, §17, DX-6).
import { Client, Connection } from '@temporalio/client';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import type { TestEnv } from '../helpers/config';
import { readableText } from '../helpers/history-text';
import type { Api } from '../helpers/http';
import { answerOf, parseNdjson } from '../helpers/http';
import { startProcessStack, type Child, type ProcessStack } from '../helpers/processes';
import { TEMPORAL_ADDRESS } from '../helpers/services';

let stack: ProcessStack;
let env: TestEnv;
let api: Child;
let worker: Child;
let fake: FakeModelServer;
let admin: Api;
let temporal: Client;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  ({ env, api, worker, admin } = stack);
  temporal = new Client({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
});

afterAll(async () => {
  await stack?.stop();
  await temporal?.connection.close();
  await fake?.close();
});

describe('README walk-through on separate API and worker processes', () => {
  const llmKey = 'sk-e2e-very-secret-llm-key-0042';
  const content = 'Tell me about the confidential merger plan';
  let executionId: string;
  let keySecret: string;

  it('AUTH-1, LLM-1, LLM-4: create a key, register an LLM, stream a direct query', async () => {
    const key = await admin.post('/api_keys', {
      name: 'walkthrough',
      permissions: ['write:llms', 'read:llms'],
    });
    expect(key.status).toBe(201);
    keySecret = key.body.secret;
    const user = admin.as({ id: key.body.id, secret: keySecret });

    const llm = await user.post('/llms', {
      name: 'fake-gpt',
      endpoint: fake.url,
      model: 'e2e-model',
      api_key: llmKey,
    });
    expect(llm.status).toBe(201);
    fake.script('e2e-model', { text: 'The plan is on schedule.' });

    const res = await user.post(`/llms/${llm.body.id}/query`, {
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content },
      ],
    });
    expect(res.status).toBe(200);
    executionId = res.headers.get('x-agentry-execution-id')!;
    const events = parseNdjson(res.text);
    expect(answerOf(events)).toBe('The plan is on schedule.');
    expect(events[events.length - 1].type).toBe('done');
    expect(fake.requestsFor('e2e-model')[0]!.headers.authorization).toBe(`Bearer ${llmKey}`);
  });

  it('DX-6/§9.3: the Temporal history holds no secret and no content in plaintext; payloads are encrypted', async () => {
    const history = await temporal.workflow.getHandle(`execution-${executionId}`).fetchHistory();
    const text = readableText(history);
    expect(readableText({ planted: Buffer.from(llmKey) })).toContain(llmKey); // the scan reads bytes
    for (const secret of [
      llmKey,
      keySecret,
      env.adminKeySecret,
      content,
      'The plan is on schedule',
      'You are terse',
    ]) {
      expect(text).not.toContain(secret);
    }
    const started = history.events?.find((e) => e.workflowExecutionStartedEventAttributes);
    const payload = started!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(Buffer.from(payload.metadata!.encoding!).toString()).toBe('binary/encrypted');
  });

  it('DX-5: the execution carries the LlmId and ApiKeyId search attributes (ids only)', async () => {
    const description = await temporal.workflow.getHandle(`execution-${executionId}`).describe();
    const attributes = description.searchAttributes as Record<string, unknown[]>;
    expect(attributes.LlmId?.[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(attributes.ApiKeyId?.[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('§16: no API key secret, LLM key or content appears in the API or worker logs', async () => {
    const logs = api.output.join('') + worker.output.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [llmKey, keySecret, env.adminKeySecret, content, 'The plan is on schedule']) {
      expect(logs).not.toContain(secret);
    }
  });

  it('§16: the worker serves activity durations by type and outcome, and Temporal worker metrics, without ids', async () => {
    const res = await fetch(`http://127.0.0.1:${worker.metricsPort}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(
      /agentry_activity_duration_seconds_count\{activity="callModel",outcome="success"\} [1-9]/,
    );
    expect(text).toMatch(/temporal_.*activity/);
    expect(text).not.toContain(executionId);
    expect(text).not.toContain(env.adminKeyId);
  });
});
