// DOC-2: which versions of a document are current once some finish ingesting. A newer version
// supersedes the older ones: the newest ready (or becoming ready) version of a document is its
// current one, the ready versions older than it expire, and a version that finishes after a newer
// one was ready becomes ready already expired (a late retry never replaces newer content).
// Pure: db/ingestion-store.ts reads the versions under lock and applies the decision.

export interface VersionState {
  id: string;
  documentId: string;
  /** DOC-2's integer version (microseconds since the epoch when it was created). */
  version: number;
  ready: boolean;
  expired: boolean;
}

interface Supersession {
  /** Finishing versions that become their document's current version. */
  current: string[];
  /** Finishing versions a newer ready or finishing version supersedes: ready, already expired. */
  superseded: string[];
  /** Versions that were current and expire now. */
  expiring: string[];
}

/**
 * The outcome of `finishing` versions completing, given every version of their documents. A
 * finishing version that is already ready changes nothing (a retried completion is a no-op).
 */
export function supersede(versions: readonly VersionState[], finishing: ReadonlySet<string>): Supersession {
  const todo = versions.filter((v) => finishing.has(v.id) && !v.ready);
  const newest = new Map<string, number>();
  for (const v of versions)
    if (v.ready || finishing.has(v.id))
      newest.set(v.documentId, Math.max(newest.get(v.documentId) ?? -Infinity, v.version));
  const current = todo.filter((v) => v.version === newest.get(v.documentId));
  const currentVersion = new Map(current.map((v) => [v.documentId, v.version]));
  return {
    current: current.map((v) => v.id),
    superseded: todo.filter((v) => v.version < newest.get(v.documentId)!).map((v) => v.id),
    expiring: versions
      .filter((v) => v.ready && !v.expired && v.version < (currentVersion.get(v.documentId) ?? -Infinity))
      .map((v) => v.id),
  };
}
