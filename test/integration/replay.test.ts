// Safe to redeploy (issue 13 item 4): every recorded history in test/fixtures/histories/ replays
// on the current workflow code, so a change that would break running executions (a reordered,
// added or removed activity, timer or child without `patched()`) fails here. The fixtures cover
// every exported workflow type and a success, a retry and a cancel; they hold no plaintext.
// Re-record them with `npm run record-histories` (docs/operations.md, "Changing a workflow safely").
import type { HistoryAndWorkflowId } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { KeyRing } from '../../infra/crypto';
import { failureConverterPath } from '../../infra/failure-converter';
import { EncryptionCodec } from '../../infra/payload-codec';
import * as workflows from '../../workflows';
import { TEST_APPLICATION_SECRET } from '../helpers/config';
import { readableText } from '../helpers/history-text';
import { ROOT, WORKFLOW_BUNDLE } from '../helpers/services';

const DIR = path.join(ROOT, 'test', 'fixtures', 'histories');
// The secret the recorder's stack ran with (test/helpers/config.ts): a test-only secret.
const codec = new EncryptionCodec(new KeyRing(TEST_APPLICATION_SECRET));

interface Fixture {
  file: string;
  type: string;
  history: History;
}

const fixtures: Fixture[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(path.join(DIR, file), 'utf8')));
    const type = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
    return { file, type, history };
  });

const { EventType } = temporal.api.enums.v1;
const lastEventType = (f: Fixture) => EventType[f.history.events?.at(-1)?.eventType ?? 0];
const retried = (f: Fixture) =>
  (f.history.events ?? []).some((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);

describe('workflow histories replay on the current code', () => {
  it('the fixtures cover every workflow type the worker registers, with successes, retries and a cancel', () => {
    expect(new Set(fixtures.map((f) => f.type))).toEqual(new Set(Object.keys(workflows)));
    for (const type of Object.keys(workflows)) {
      const ofType = fixtures.filter((f) => f.type === type);
      expect(ofType.map(lastEventType)).toContain('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    }
    const retriedTypes = new Set(fixtures.filter(retried).map((f) => f.type));
    expect(retriedTypes).toEqual(new Set(['agentExecution', 'llmQuery', 'documentIngestion']));
    expect(fixtures.map(lastEventType)).toContain('EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED');
    // Children: EXECUTE references and chain steps start promptExecution children.
    const parents = fixtures.filter((f) =>
      (f.history.events ?? []).some((e) => e.childWorkflowExecutionCompletedEventAttributes),
    );
    expect(new Set(parents.map((f) => f.type))).toEqual(
      new Set(['agentExecution', 'promptExecution', 'chainExecution']),
    );
  });

  it('the fixtures hold no content: encrypted payloads that decode with the test secret to ids', async () => {
    const words = ['Which colour', 'Blue.', 'Calm.', 'Step.', 'sky is blue', 'Grass is green', 'Say hi'];
    const text = readableText(fixtures.map((f) => f.history));
    for (const word of words) expect(text).not.toContain(word);
    // Content never enters a history (activities pass payload ids); decoded, the payloads show ids.
    const payloads: Payload[] = [];
    const walk = (v: unknown): void => {
      if (!v || typeof v !== 'object' || ArrayBuffer.isView(v)) return;
      if ('metadata' in v && 'data' in v) payloads.push(v as Payload);
      else Object.values(v).forEach(walk);
    };
    fixtures.forEach((f) => walk(f.history));
    const decoded = (await codec.decode(payloads)).map((p) => Buffer.from(p.data ?? []).toString('utf8'));
    expect(decoded.join('\n')).toContain('"executionId"');
    for (const word of words) expect(decoded.join('\n')).not.toContain(word);
  });

  it('every fixture replays without a nondeterminism error', async () => {
    const inputs: HistoryAndWorkflowId[] = fixtures.map((f) => ({ workflowId: f.file, history: f.history }));
    const failures: string[] = [];
    const replayed: string[] = [];
    for await (const result of Worker.runReplayHistories(
      {
        workflowBundle: { codePath: WORKFLOW_BUNDLE },
        dataConverter: {
          payloadCodecs: [codec],
          failureConverterPath,
        },
      },
      inputs,
    )) {
      replayed.push(result.workflowId);
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed.sort()).toEqual(fixtures.map((f) => f.file));
  });
});
