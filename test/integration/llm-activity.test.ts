// SPEC §9.3 step 6, EX-6: the LLM activity of an agent execution, watched from outside while it
// runs: it calls the model once with the rendered prompt, streams each delta to the relay as the
// model sends it (the client reads the first long before the last), heartbeats while it streams
// (Temporal shows the pending activity's last heartbeat), stores the answer and returns its id and
// the usage (the activity's result in history holds those, never the text). Aborting the model
// request on cancel is DX-3's test in executions.test.ts.
import { defaultPayloadConverter } from '@temporalio/common';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { executeAgent, scriptedAnswer, seedAgent, type SeededAgent } from '../helpers/agent-streams';
import { answerOf } from '../helpers/http';
import { startStack, type Stack } from '../helpers/stack';
import { until } from '../helpers/wait';

const MODEL = 'ex6-model';
const DELTA_DELAY_MS = 400;
const WORDS = 10;

let stack: Stack;
let fake: FakeModelServer;
let agent: SeededAgent;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  agent = await seedAgent(stack.api, fake, { model: MODEL });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

it('EX-6: the LLM activity calls the model, streams deltas to the relay as they come, heartbeats, stores the answer and returns its id and usage', async () => {
  const answer = scriptedAnswer(WORDS);
  fake.script(MODEL, { text: answer, deltaDelayMs: DELTA_DELAY_MS });
  const stream = await executeAgent(stack.api, agent);
  expect(stream.status).toBe(200);
  const handle = stack.temporal.workflow.getHandle(`execution-${stream.executionId}`);

  // While the model streams: the activity is pending and has heartbeated.
  const heartbeat = await until(
    async () => {
      const { raw } = await handle.describe();
      const call = raw.pendingActivities?.find((a) => a.activityType?.name === 'callModel');
      return call?.lastHeartbeatTime ?? undefined;
    },
    { timeoutMs: WORDS * DELTA_DELAY_MS, intervalMs: 100, what: "the model call's heartbeat" },
  );
  expect(heartbeat).toBeDefined();
  await stream.ended;

  // Deltas reached the client as the model sent them, not all at the end.
  const deltas = stream.events
    .map((e, i) => ({ e, at: stream.arrivals[i]! }))
    .filter((d) => d.e.type === 'delta');
  expect(deltas).toHaveLength(WORDS);
  expect(deltas[WORDS - 1]!.at - deltas[0]!.at).toBeGreaterThan((WORDS - 3) * DELTA_DELAY_MS);
  expect(answerOf(stream.events)).toBe(answer);
  const done = stream.events.find((e) => e.type === 'done');

  // One model call, with the rendered prompt.
  const requests = fake.requestsFor(MODEL);
  expect(requests).toHaveLength(1);
  expect(JSON.stringify(requests[0]!.body)).toContain('Question: How do I rotate the credentials?');

  // The activity's result: the stored answer's id and the usage, no text.
  const history = await handle.fetchHistory();
  const scheduled = history.events!.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  )!;
  const completed = history.events!.find(
    (e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === String(scheduled.eventId),
  )!;
  const [payload] = await stack.rt.codec.decode(
    completed.activityTaskCompletedEventAttributes!.result!.payloads!,
  );
  const result = defaultPayloadConverter.fromPayload<{ answerPayloadId: string; usage: unknown }>(payload!);
  expect(result).toMatchObject({ answerPayloadId: expect.any(String), usage: done.usage });
  expect(JSON.stringify(result)).not.toContain(answer.split(' ')[0]);

  // The stored answer is the one streamed.
  await handle.result();
  const record = await stack.api.get(`/executions/${stream.executionId}`);
  expect(record.status).toBe(200);
  expect(record.body).toMatchObject({ status: 'succeeded', answer, usage: done.usage });
});
