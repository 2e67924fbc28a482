// DOC-1..3: split → embed in batches → make current (and expire the previous version) in one
// transaction → ready; after the retries are spent, `failed` with the reason. The workflow
// receives the document version id, never its content.
import { ApplicationFailure, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { withSummaries } from './activity-proxies';
import { type DocumentIngestionInput, type IngestionProfile } from './contracts';
import { retryPolicy } from './retry-policy';

// Splitting, staging and finishing are short database steps (and, with the built-in embedder,
// the embedding too): local activities, recorded in the workflow task that runs them, instead of
// a schedule/dispatch/complete round trip through the server each (DESIGN §3: "cheap steps may be
// local activities when the benchmark shows it pays"; bench/README.md). Calls to an embedding
// server stay activities: they heartbeat and may be slow or rate limited.
function activities(profile: IngestionProfile) {
  const local = withSummaries(
    {
      prepareIngestion: 'split and stage document',
      finishIngestion: 'make version current',
      failIngestion: 'record failure',
    },
    (summary) =>
      proxyLocalActivities<Pick<Activities, 'prepareIngestion' | 'finishIngestion' | 'failIngestion'>>({
        startToCloseTimeout: profile.startToCloseMs,
        retry: retryPolicy(profile),
        summary,
      }),
  );
  const { embedFragments } = proxyActivities<Pick<Activities, 'embedFragments'>>({
    startToCloseTimeout: profile.startToCloseMs,
    heartbeatTimeout: profile.heartbeatTimeoutMs,
    retry: retryPolicy(profile),
    summary: 'embed fragments',
  });
  return { ...local, embedFragments };
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
    const { fragmentCount, embedded } = await act.prepareIngestion(documentVersionId);
    const ranges: number[] = [];
    // Chunks the built-in embedder already embedded while staging need no embedding batches.
    if (!embedded) for (let from = 0; from < fragmentCount; from += profile.batchSize) ranges.push(from);
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
