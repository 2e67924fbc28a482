// Issue 36: Worker Versioning. With TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID set, both
// SDK workers of a process are that version of that Worker Deployment, and an execution started
// once the version is current is pinned to it (the default behaviour): a rollout never moves it
// to other code. The ingestion proves the -tasks worker serves under the version too.
import { randomBytes } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { answerOf, parseNdjson } from '../helpers/http';
import { documentSettled, seedPipeline } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';
import { until } from '../helpers/wait';

const { VersioningBehavior } = temporal.api.enums.v1;

describe('issue 36: versioned workers', () => {
  const deploymentName = `agentry-test-${randomBytes(4).toString('hex')}`;
  let stack: Stack;
  let fake: FakeModelServer;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    stack = await startStack({
      env: { TEMPORAL_DEPLOYMENT_NAME: deploymentName, TEMPORAL_WORKER_BUILD_ID: 'build-1' },
    });
    const { namespace } = stack.env.config.temporal;
    // What the Worker Controller (or `temporal worker deployment set-current-version`) does once
    // the version's pollers are seen.
    await until(
      () =>
        stack.temporal.workflowService
          .setWorkerDeploymentCurrentVersion({
            namespace,
            deploymentName,
            buildId: 'build-1',
            identity: 'test',
          })
          .then(
            () => true,
            () => undefined,
          ),
      { what: 'the version to become current', timeoutMs: 30_000, intervalMs: 500 },
    );
  });

  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  it('an execution runs pinned to the current version; an ingestion runs through both versioned workers', async () => {
    expect(stack.worker!.states()).toEqual({ executions: 'RUNNING', tasks: 'RUNNING' });
    fake.script('versioned', { text: 'Pinned to build one.' });
    const llm = await stack.api.post('/llms', {
      name: 'v',
      endpoint: fake.url,
      model: 'versioned',
      api_key: 'sk-v',
    });
    const res = await stack.api.post(`/llms/${llm.body.id}/query`, {
      messages: [{ role: 'user', content: 'Which?' }],
    });
    expect(res.status).toBe(200);
    expect(answerOf(parseNdjson(res.text))).toBe('Pinned to build one.');
    const executionId = res.headers.get('x-agentry-execution-id');
    const described = await stack.temporal.workflow.getHandle(`execution-${executionId}`).describe();
    const versioning = described.raw.workflowExecutionInfo?.versioningInfo;
    expect(versioning?.behavior).toBe(VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
    expect(versioning?.deploymentVersion).toMatchObject({ deploymentName, buildId: 'build-1' });

    const { pipelineId } = await seedPipeline(stack.api, { name: 'versioned' });
    const doc = await stack.api.post(`/pipelines/${pipelineId}/documents`, {
      content: 'A versioned line.',
      classification: 'public',
    });
    expect((await documentSettled(stack.api, pipelineId, doc.body.id, { timeoutMs: 30_000 })).status).toBe(
      'ready',
    );
  });
});
