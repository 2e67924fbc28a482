// DOC-1..3: split → embed in batches → make current (and expire the previous version) in one
// transaction → ready; after the retries are spent, `failed` with the reason. The workflow
// receives the document version id, never its content.
import { ApplicationFailure, proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { tasksQueue, withSummaries } from './activity-proxies';
import {
  IngestionFailure,
  type DocumentBatchIngestionInput,
  type DocumentIngestionInput,
  type IngestionProfile,
} from './contracts';
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
    taskQueue: tasksQueue(),
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

/** After a batch, how long its model's deferred index waits for the next batch of an import. */
const INDEX_QUIET_MS = 1000;

function batchActivities(profile: IngestionProfile) {
  const local = withSummaries(
    {
      finishIngestions: 'make staged versions current',
      failUnembedded: 'record failures of unembedded versions',
      failIngestion: 'record failure',
      failBatch: 'record failure of the rest of the batch',
    },
    (summary) =>
      proxyLocalActivities<
        Pick<Activities, 'finishIngestions' | 'failUnembedded' | 'failIngestion' | 'failBatch'>
      >({
        startToCloseTimeout: profile.startToCloseMs,
        retry: retryPolicy(profile),
        summary,
      }),
  );
  // A group takes seconds (a thousand fragments split, embedded and written): an activity of its
  // own, heartbeating, rather than local activities back to back in one long workflow task.
  const remote = withSummaries(
    {
      ingestDocuments: 'split, embed and store a group of documents',
      embedStaged: 'embed fragments of a group',
      embedFragments: 'embed fragments of one document',
    },
    (summary) =>
      proxyActivities<Pick<Activities, 'ingestDocuments' | 'embedStaged' | 'embedFragments'>>({
        taskQueue: tasksQueue(),
        startToCloseTimeout: profile.startToCloseMs,
        heartbeatTimeout: profile.heartbeatTimeoutMs,
        retry: retryPolicy(profile),
        summary,
      }),
  );
  // A build of a large index takes minutes; the heartbeat, not this timeout, notices a dead worker.
  const { buildVectorIndex } = proxyActivities<Pick<Activities, 'buildVectorIndex'>>({
    taskQueue: tasksQueue(),
    startToCloseTimeout: '24 hours',
    heartbeatTimeout: profile.heartbeatTimeoutMs,
    retry: retryPolicy(profile),
    summary: 'build vector index',
  });
  return { ...local, ...remote, buildVectorIndex };
}

const isRejection = (err: unknown): boolean => {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof ApplicationFailure) return e.type === IngestionFailure.EmbeddingRejected;
  }
  return false;
};

/** Runs `tasks` `parallelism` at a time; the first failure, if any, once all have run. */
async function inTurns(tasks: (() => Promise<void>)[], parallelism: number): Promise<unknown> {
  let failure: unknown;
  for (let i = 0; i < tasks.length; i += parallelism) {
    const results = await Promise.allSettled(tasks.slice(i, i + parallelism).map((t) => t()));
    failure ??= results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason;
  }
  return failure;
}

/**
 * Embeds a group's staged versions in ranges of `batchSize` fragments across documents (many small
 * documents share server batches). When a range is refused, each version is embedded alone so
 * that only the documents the server refuses fail; when the server stays unavailable, the versions
 * left unembedded fail. Returns the versions that failed.
 */
async function embedGroup(
  act: ReturnType<typeof batchActivities>,
  profile: IngestionProfile,
  staged: { documentVersionId: string; fragmentCount: number }[],
): Promise<Set<string>> {
  const ids = staged.map((s) => s.documentVersionId);
  const total = staged.reduce((n, s) => n + s.fragmentCount, 0);
  const ranges: (() => Promise<void>)[] = [];
  for (let from = 0; from < total; from += profile.batchSize)
    ranges.push(() => act.embedStaged({ documentVersionIds: ids, from, count: profile.batchSize }));
  const failure = await inTurns(ranges, profile.parallelism);
  if (!failure) return new Set();
  if (!isRejection(failure))
    return new Set(await act.failUnembedded({ documentVersionIds: ids, error: reason(failure) }));
  const failed = new Set<string>();
  const alone = staged.map(({ documentVersionId, fragmentCount }) => async () => {
    try {
      for (let from = 0; from < fragmentCount; from += profile.batchSize)
        await act.embedFragments({ documentVersionId, from, count: profile.batchSize });
    } catch (err) {
      failed.add(documentVersionId);
      await act.failIngestion({ documentVersionId, error: reason(err) });
    }
  });
  await inTurns(alone, profile.parallelism);
  return failed;
}

/**
 * A `documents:batch` request (issue 15): its documents in groups of about 1,000 fragments, each
 * document with its own version, status and failure (DOC-1..3), instead of a workflow each. When
 * a group's load deferred its model's index (db/vector-index.ts), the batch builds it at the end
 * unless another batch of the import is still loading, which then builds it.
 */
export async function documentBatchIngestion(
  input: DocumentBatchIngestionInput,
): Promise<{ documents: number }> {
  const { profile, batchId } = input;
  const act = batchActivities(profile);
  const indexes = new Set<string>();
  let from = 0;
  try {
    for (;;) {
      const group = await act.ingestDocuments({ batchId, from });
      if (group.consumed === 0) break;
      from += group.consumed;
      group.indexesToBuild.forEach((id) => indexes.add(id));
      if (group.staged.length === 0) continue;
      const failed = await embedGroup(act, profile, group.staged);
      const finished = await act.finishIngestions({
        documentVersionIds: group.staged.map((s) => s.documentVersionId).filter((id) => !failed.has(id)),
      });
      finished.indexesToBuild.forEach((id) => indexes.add(id));
    }
  } catch (err) {
    await act.failBatch({ batchId, error: reason(err) });
    throw err;
  } finally {
    for (const embeddingModelId of indexes) {
      await sleep(INDEX_QUIET_MS);
      // The documents are ready whatever happens to the build; a later batch builds it again.
      await act.buildVectorIndex({ embeddingModelId }).catch(() => undefined);
    }
  }
  return { documents: from };
}
