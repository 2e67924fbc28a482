// Issue 36: the settings of a worker pool: which queues it serves, its shutdown grace, and
// Worker Versioning (both TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID, pinned by default).
import type { ConfigError } from '../../infra/config';
import { loadConfig } from '../../infra/config';
import { workerDeployment } from '../../start-worker';

const worker = (env: Record<string, string>) => loadConfig(env).worker;
const problems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
};

describe('worker settings (issue 36)', () => {
  it('serves both queues, a 25 s grace and a 5 s loop bound by default, unversioned', () => {
    expect(worker({})).toEqual({
      queues: ['executions', 'tasks'],
      shutdownGraceMs: 25_000,
      maxLoopDelayMs: 5000,
      versioning: undefined,
    });
    expect(workerDeployment(undefined)).toEqual({});
  });

  it('AGENTRY_WORKER_QUEUES picks one queue, or both in any order; anything else is named', () => {
    expect(worker({ AGENTRY_WORKER_QUEUES: 'tasks' }).queues).toEqual(['tasks']);
    expect(worker({ AGENTRY_WORKER_QUEUES: ' tasks , executions' }).queues).toEqual(['executions', 'tasks']);
    expect(problems({ AGENTRY_WORKER_QUEUES: 'models' })).toEqual([
      'AGENTRY_WORKER_QUEUES must list one or both of executions, tasks (got "models")',
    ]);
  });

  it('versioning needs both the deployment name and the build id; pinned unless told otherwise', () => {
    const env = { TEMPORAL_DEPLOYMENT_NAME: 'agentry/prod', TEMPORAL_WORKER_BUILD_ID: '1.4.0-abc' };
    const versioning = worker(env).versioning;
    expect(versioning).toEqual({
      deploymentName: 'agentry/prod',
      buildId: '1.4.0-abc',
      defaultBehavior: 'PINNED',
    });
    expect(workerDeployment(versioning)).toEqual({
      workerDeploymentOptions: {
        useWorkerVersioning: true,
        version: { deploymentName: 'agentry/prod', buildId: '1.4.0-abc' },
        defaultVersioningBehavior: 'PINNED',
      },
    });
    expect(
      worker({ ...env, AGENTRY_WORKER_VERSIONING_BEHAVIOR: 'auto-upgrade' }).versioning?.defaultBehavior,
    ).toBe('AUTO_UPGRADE');
    expect(problems({ TEMPORAL_WORKER_BUILD_ID: '1.4.0' })).toEqual([
      'TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID must be set together',
    ]);
  });

  it('the grace and the loop bound are bounded integers', () => {
    expect(worker({ AGENTRY_WORKER_SHUTDOWN_GRACE_MS: '60000' }).shutdownGraceMs).toBe(60_000);
    expect(problems({ AGENTRY_WORKER_LIVENESS_LOOP_DELAY_MS: '10' })).toEqual([
      'AGENTRY_WORKER_LIVENESS_LOOP_DELAY_MS must be an integer between 100 and 600000 (got "10")',
    ]);
  });
});
