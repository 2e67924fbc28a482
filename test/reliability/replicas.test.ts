// Several replicas as one service (issue 14): two API processes and three worker processes on one
// task queue, sharing PostgreSQL, Redis and Temporal. What a client starts through one API it can
// re-attach to (DX-2), cancel (DX-3) and repeat (DX-4) through the other; the chain guardrails and
// the failed-authentication limit are counted once for the service, not per process (CH-4,
// AUTH-6); executions run on whichever worker; and an API or a worker killed mid-stream loses
// nothing (§9.5, §9.6). One stack for the file: the last two cases kill processes, so they run last.
import { randomUUID } from 'node:crypto';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { parseNdjson, type Api } from '../helpers/http';
import { startProcessStack, type Child, type ProcessStack } from '../helpers/processes';
import { TEMPORAL_ADDRESS } from '../helpers/services';
import { until, waitFor } from '../helpers/wait';
import {
  deltaCount,
  executeAgent,
  expectCleanAnswer,
  resets,
  scriptedAnswer,
  seedAgent,
  type SeededAgent,
} from '../helpers/agent-streams';
import { expectRecoveredFromWorkerDeath, finishedRecord, senderOfModelRequest } from './support';

const MODEL = 'replica-gpt';
const CHAIN_MODEL = 'replica-chain-gpt';
const CHAIN_PROMPT = 'replicas.step';
/** 40 words, one per delta, 100 ms apart: about 4 s per attempt. */
const ANSWER = scriptedAnswer(40);
const AUTH_FAILURE_LIMIT = 6;

let stack: ProcessStack;
let fake: FakeModelServer;
let agent: SeededAgent;
let temporal: TemporalClient;
/** Clients of the two API processes. */
let a: Api;
let b: Api;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack({
    AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS: '3000',
    AGENTRY_AUTH_FAILURE_LIMIT: String(AUTH_FAILURE_LIMIT),
  });
  const [replica] = await Promise.all([stack.startApi(), stack.startWorker(), stack.startWorker()]);
  a = stack.admin;
  b = stack.adminOf(replica);
  agent = await seedAgent(a, fake, { model: MODEL });
  temporal = new TemporalClient({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
}, 120_000);

afterAll(async () => {
  await temporal?.connection.close();
  await stack?.stop();
  await fake?.close();
});

beforeEach(() => fake.script(MODEL, { text: ANSWER, deltaDelayMs: 100 }));
afterEach(() => fake.requests.splice(0));

const isLive = (child: Child): boolean =>
  child.process.exitCode === null && child.process.signalCode === null;

/** GET /executions/{id}/stream (NDJSON) to its end, after `lastEventId` when given. */
async function reattach(api: Api, executionId: string, lastEventId?: number): Promise<any[]> {
  const res = await fetch(`${api.baseUrl}/executions/${executionId}/stream`, {
    headers: api.headers(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }),
  });
  expect(res.status).toBe(200);
  return parseNdjson(await res.text());
}

/** The status of an execution's workflow once it closed (its result is encrypted: not read here). */
const closedStatus = (executionId: string): Promise<string> =>
  until(
    async () => {
      const { status } = await temporal.workflow.getHandle(`execution-${executionId}`).describe();
      return status.name === 'RUNNING' ? undefined : status.name;
    },
    { what: `workflow execution-${executionId} to close`, timeoutMs: 30_000, intervalMs: 100 },
  );

/** The pids of the workers that ran a closed workflow's activities (the SDK's `<pid>@<host>`). */
async function activityWorkerPids(executionId: string): Promise<number[]> {
  expect(await closedStatus(executionId)).toBe('COMPLETED');
  const history = await temporal.workflow.getHandle(`execution-${executionId}`).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const identity = e.activityTaskStartedEventAttributes?.identity;
    return identity ? [Number(identity.split('@')[0])] : [];
  });
}

describe('reliability: two API processes and three workers as one service', () => {
  it('DX-2: an execution started through API A re-attaches through API B, from the start and after Last-Event-ID; each way the whole answer once', async () => {
    const stream = await executeAgent(a, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 3, { what: 'the first deltas', timeoutMs: 20_000 });
    const received = [...stream.events];
    const lastSeq = received[received.length - 1].seq as number;

    const [whole, rest] = await Promise.all([
      reattach(b, stream.executionId),
      reattach(b, stream.executionId, lastSeq),
    ]);
    await stream.ended;
    expectCleanAnswer(stream.events, ANSWER, 1);
    expect(whole).toEqual(stream.events);
    expect(rest[0].seq).toBe(lastSeq + 1);
    expect([...received, ...rest]).toEqual(stream.events);
    expect(fake.requestsFor(MODEL).map((r) => r.aborted)).toEqual([false]);
  }, 60_000);

  it('DX-3: an execution started through API A is cancelled through API B: 202, the stream through A ends with error 499, the workflow is cancelled; cancelling again through A → 409', async () => {
    fake.script(MODEL, { text: scriptedAnswer(400), deltaDelayMs: 100 });
    const stream = await executeAgent(a, agent);
    expect(stream.status).toBe(200);
    const id = stream.executionId;
    await waitFor(() => deltaCount(stream.events) >= 2, { what: 'the first deltas', timeoutMs: 20_000 });

    const cancel = await b.delete(`/executions/${id}`);
    expect(cancel.status).toBe(202);
    expect(cancel.body).toMatchObject({ id, kind: 'agent' });
    await stream.ended;
    const terminal = stream.events.filter((e) => e.type === 'done' || e.type === 'error');
    expect(terminal).toEqual([expect.objectContaining({ type: 'error', status: 499 })]);
    expect(stream.events[stream.events.length - 1]).toBe(terminal[0]);

    expect(await closedStatus(id)).toBe('CANCELLED');
    expect(await finishedRecord(stack.database.url, id)).toMatchObject({ status: 'cancelled' });
    await waitFor(() => fake.requestsFor(MODEL)[0]?.aborted === true, {
      what: 'the model request to be aborted',
    });

    const again = await a.delete(`/executions/${id}`);
    expect(again.status).toBe(409);
    expect(again.body.detail).toBe(`Execution ${id} is not running: it is cancelled`);
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
  }, 60_000);

  it('DX-4: the same Idempotency-Key sent through A and B at once starts one execution (same id, one model call); a different body with that key → 409 through either', async () => {
    fake.script(MODEL, { text: ANSWER, deltaDelayMs: 20 });
    const key = { 'Idempotency-Key': `replicas-${randomUUID()}` };
    const [viaA, viaB] = await Promise.all([executeAgent(a, agent, key), executeAgent(b, agent, key)]);
    expect([viaA.status, viaB.status]).toEqual([200, 200]);
    expect(viaB.executionId).toBe(viaA.executionId);
    await Promise.all([viaA.ended, viaB.ended]);
    expectCleanAnswer(viaA.events, ANSWER, 1);
    expect(viaB.events).toEqual(viaA.events);
    expect(fake.requestsFor(MODEL)).toHaveLength(1);

    const headers = { 'x-pipeline-id': agent.pipelineId, 'x-llm-id': agent.llmId, ...key };
    const other = { prompt: { question: 'Who rotates them?' }, classification: 'internal' };
    for (const api of [b, a]) {
      const conflict = await api.post(`/agents/${agent.agentId}/execute`, other, headers);
      expect(conflict.status).toBe(409);
      expect(conflict.body.detail).toContain('was already used with a different request');
    }
    expect(fake.requestsFor(MODEL)).toHaveLength(1);
  }, 60_000);

  describe('limits counted once for the service', () => {
    beforeAll(async () => {
      const llm = await a.post('/llms', {
        name: 'rel-replica-chain',
        endpoint: fake.url,
        model: CHAIN_MODEL,
        api_key: 'sk-x',
      });
      expect(llm.status).toBe(201);
      const prompt = await a.post('/api/v1/prompts', {
        promptId: CHAIN_PROMPT,
        name: CHAIN_PROMPT,
        userPrompt: 'Summarise the rotation policy.',
        customGatewayId: llm.body.id,
      });
      expect(prompt.status).toBe(201);
    });

    const createChain = async (name: string, settings: Record<string, unknown>): Promise<string> => {
      const res = await a.post('/api/v1/chains', {
        name,
        steps: [{ order: 1, promptId: CHAIN_PROMPT }],
        ...settings,
      });
      expect(res.status).toBe(201);
      return res.body.chainId as string;
    };
    const executeChain = (api: Api, chainId: string) =>
      api.post(`/api/v1/chains/${chainId}/execute`, { inputs: {} });
    const violation = (reason: string) => ({
      success: false,
      error: 'Chain guardrail violation',
      details: [{ reason }],
    });

    it('CH-4: rateLimitPerMinute 2 is one budget for both APIs: one execution through each, then the next through either → 429 rateLimit', async () => {
      fake.script(CHAIN_MODEL, { text: 'Rotated monthly.' });
      const chainId = await createChain('rel-replica-rate', {
        maxConcurrency: 10,
        guardrails: { rateLimitPerMinute: 2 },
      });
      expect((await executeChain(a, chainId)).body).toMatchObject({ status: 'SUCCESS' });
      expect((await executeChain(b, chainId)).body).toMatchObject({ status: 'SUCCESS' });
      for (const api of [a, b]) {
        const refused = await executeChain(api, chainId);
        expect(refused.status).toBe(429);
        expect(refused.body).toEqual(violation('rateLimit'));
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect(fake.requestsFor(CHAIN_MODEL)).toHaveLength(2);
      expect((await b.get(`/api/v1/chains/${chainId}`)).body.usage.totalExecutions).toBe(2);
    }, 60_000);

    it('CH-4: maxConcurrency 1 counts executions running through either API: one running through A → 429 maxConcurrency through B, admitted once it ended', async () => {
      fake.script(CHAIN_MODEL, { text: scriptedAnswer(30), deltaDelayMs: 100 });
      const chainId = await createChain('rel-replica-concurrency', { maxConcurrency: 1 });
      const running = executeChain(a, chainId);
      // Its step asked the model: the execution's record is committed and counted.
      await waitFor(() => fake.requestsFor(CHAIN_MODEL).length === 1, {
        what: 'the step of the first execution',
        timeoutMs: 20_000,
      });
      const refused = await executeChain(b, chainId);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(violation('maxConcurrency'));
      expect((await running).body).toMatchObject({ status: 'SUCCESS' });

      fake.script(CHAIN_MODEL, { text: 'Rotated monthly.' });
      expect((await executeChain(b, chainId)).body).toMatchObject({ status: 'SUCCESS' });
      expect(fake.requestsFor(CHAIN_MODEL)).toHaveLength(2);
    }, 60_000);

    it('AUTH-6: failed authentications through both APIs add up: half the limit through each, then wrong credentials → 429 through either; valid ones still pass', async () => {
      const wrong = { id: randomUUID(), secret: 'not-the-secret' };
      for (let n = 0; n < AUTH_FAILURE_LIMIT; n++) {
        const res = await (n % 2 === 0 ? a : b).as(wrong).get('/agents');
        expect(res.status).toBe(401);
      }
      for (const api of [a, b]) {
        const blocked = await api.as(wrong).get('/agents');
        expect(blocked.status).toBe(429);
        expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
        expect((await api.get('/agents')).status).toBe(200);
      }
    });
  });

  it('executions started through both APIs run their activities on more than one of the three workers, each with the whole answer once', async () => {
    fake.script(MODEL, { text: scriptedAnswer(5) });
    const workers = new Set(stack.workers.filter(isLive).map((w) => w.process.pid));
    expect(workers.size).toBe(3);
    const seen = new Set<number>();
    // Temporal hands each task to whichever worker polls; rounds of concurrent executions until
    // two workers were seen (one round nearly always suffices).
    for (let round = 0; round < 5 && seen.size < 2; round++) {
      const streams = await Promise.all(
        Array.from({ length: 6 }, (_, i) => executeAgent(i % 2 === 0 ? a : b, agent)),
      );
      for (const stream of streams) {
        expect(stream.status).toBe(200);
        await stream.ended;
        expectCleanAnswer(stream.events, scriptedAnswer(5), 1);
        for (const pid of await activityWorkerPids(stream.executionId)) seen.add(pid);
      }
    }
    expect([...seen].every((pid) => workers.has(pid))).toBe(true);
    expect(seen.size).toBeGreaterThan(1);
  }, 60_000);

  it('DX-2/§9.6: API B is SIGKILLed mid-stream; the client re-attaches through API A after Last-Event-ID and ends with the whole answer once and one done; 1 model call', async () => {
    const stream = await executeAgent(b, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 5, { what: 'the first deltas', timeoutMs: 20_000 });
    await stack.apis[1]!.kill('SIGKILL');
    await stream.ended.catch(() => undefined); // the connection died with the process
    const received = [...stream.events];
    expect(received.some((e) => e.type === 'done' || e.type === 'error')).toBe(false);
    const lastSeq = received[received.length - 1].seq as number;

    const rest = await reattach(a, stream.executionId, lastSeq);
    expect(rest[0].seq).toBe(lastSeq + 1);
    const whole = [...received, ...rest];
    expectCleanAnswer(whole, ANSWER, 1);
    expect(resets(whole)).toHaveLength(0);
    expect(fake.requestsFor(MODEL).map((r) => r.aborted)).toEqual([false]);
  }, 60_000);

  it('LLM-3/§9.5: the worker streaming is SIGKILLed; after the heartbeat timeout another of the three runs attempt 2; the client sees reset, then the whole answer once; 2 model calls', async () => {
    const workers = stack.workers.filter(isLive);
    const stream = await executeAgent(a, agent);
    expect(stream.status).toBe(200);
    await waitFor(() => deltaCount(stream.events) >= 3, { what: 'the first deltas', timeoutMs: 20_000 });
    // Whichever worker got the activity holds the connection to the model server.
    const streamingPid = await senderOfModelRequest(fake, MODEL, 0);
    const streaming = workers.find((w) => w.process.pid === streamingPid);
    expect(streaming).toBeDefined();
    await streaming!.kill('SIGKILL');
    const beforeKill = stream.events.length;

    const retryPid = await senderOfModelRequest(fake, MODEL, 1);
    expect(workers.filter((w) => w !== streaming).map((w) => w.process.pid)).toContain(retryPid);
    await stream.ended;
    await expectRecoveredFromWorkerDeath({
      events: stream.events,
      executionId: stream.executionId,
      beforeKill,
      answer: ANSWER,
      fake,
      model: MODEL,
      databaseUrl: stack.database.url,
    });
  }, 60_000);
});
