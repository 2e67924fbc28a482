// DOC-1..3: split → embed in batches → make current (and expire the previous version) in one
// transaction → ready; after the retries are spent, `failed` with the reason. The workflow
// receives the document version id, never its content.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { type DocumentIngestionInput, type IngestionProfile } from './contracts';
import { retryPolicy } from './retry-policy';

function activities(profile: IngestionProfile) {
  return proxyActivities<
    Pick<Activities, 'prepareIngestion' | 'embedFragments' | 'finishIngestion' | 'failIngestion'>
  >({
    startToCloseTimeout: profile.startToCloseMs,
    heartbeatTimeout: profile.heartbeatTimeoutMs,
    retry: retryPolicy(profile),
  });
}

function reason(err: unknown): string {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof ApplicationFailure) return e.message;
  }
  return err instanceof Error ? err.message : 'Ingestion failed';
}

export async function documentIngestion(input: DocumentIngestionInput): Promise<{ fragmentCount: number }> {
  const { profile, documentVersionId } = input;
  const act = activities(profile);
  try {
    const { fragmentCount } = await act.prepareIngestion(documentVersionId);
    const ranges: number[] = [];
    for (let from = 0; from < fragmentCount; from += profile.batchSize) ranges.push(from);
    for (let i = 0; i < ranges.length; i += profile.parallelism) {
      await Promise.all(
        ranges
          .slice(i, i + profile.parallelism)
          .map((from) => act.embedFragments({ documentVersionId, from, count: profile.batchSize })),
      );
    }
    await act.finishIngestion(documentVersionId);
    return { fragmentCount };
  } catch (err) {
    await act.failIngestion({ documentVersionId, error: reason(err) });
    throw err;
  }
}
