// What one execution's steps hand each other inside this worker process, so that each thing is
// read and decrypted once (issue 26): the request's values (read by the first retrieval, used by
// the others, by render and by the trace), each placeholder's fragments (returned by its search,
// inserted by render, traced) and the rendered messages (written by render, traced, sent by the
// model call). The steps
// before the model call are local activities of one workflow task, and the model call is
// dispatched eagerly to the worker that scheduled it, so they normally run here; when one does
// not (a retry on another worker, after a restart), it reads what it needs from PostgreSQL as
// before. History never carries any of it (DX-6); memory holds it for the execution's first
// steps only: the model call takes the rendered messages and the entry with them, and whatever
// an execution left (it failed before its model call) is dropped after a minute.
import { LRUCache } from 'lru-cache';
import type { FragmentRecord } from '../db/document-store';
import type { ChatMessage } from '../domain/llm-request';

/** How long an execution's entry outlives its last use, and how many are held at most. */
const KEEP_MS = 60_000;
const MAX_EXECUTIONS = 10_000;

interface Entry {
  request?: unknown;
  /** Each placeholder's fragments as its retrieval found them, in rank order. */
  retrieved: Map<string, FragmentRecord[]>;
  rendered?: { payloadId: string; messages: ChatMessage[] };
}

export class ExecutionScratch {
  // Purged on time: an entry must not outlive the execution's steps (and, as the query-vector
  // memo showed, a lazily expired entry can keep its activity's context alive; issue 16).
  private readonly entries = new LRUCache<string, Entry>({
    max: MAX_EXECUTIONS,
    ttl: KEEP_MS,
    ttlAutopurge: true,
  });

  private entry(executionId: string): Entry {
    let entry = this.entries.get(executionId);
    if (!entry) this.entries.set(executionId, (entry = { retrieved: new Map() }));
    return entry;
  }

  /** The request content, read (and decrypted) once per execution in this process. */
  async request<T>(executionId: string, read: () => Promise<T | null>): Promise<T | null> {
    const held = this.entries.get(executionId)?.request as T | undefined;
    if (held !== undefined) return held;
    const request = await read();
    if (request !== null) this.entry(executionId).request = request;
    return request;
  }

  keepRetrieved(executionId: string, placeholder: string, fragments: FragmentRecord[]): void {
    this.entry(executionId).retrieved.set(placeholder, fragments);
  }

  /** The fragments `ids` names if this process's retrieval found exactly those (same order). */
  retrieved(executionId: string, placeholder: string, ids: readonly string[]): FragmentRecord[] | undefined {
    const held = this.entries.get(executionId)?.retrieved.get(placeholder);
    if (!held || held.length !== ids.length || held.some((f, i) => f.id !== ids[i])) return undefined;
    return held;
  }

  keepRendered(executionId: string, payloadId: string, messages: ChatMessage[]): void {
    this.entry(executionId).rendered = { payloadId, messages };
  }

  /** The rendered messages stored as `payloadId`, left for the model call. */
  rendered(executionId: string, payloadId: string): ChatMessage[] | undefined {
    const rendered = this.entries.get(executionId)?.rendered;
    return rendered?.payloadId === payloadId ? rendered.messages : undefined;
  }

  /** The rendered messages stored as `payloadId`, taken with the execution's entry. */
  takeRendered(executionId: string, payloadId: string): ChatMessage[] | undefined {
    const rendered = this.entries.get(executionId)?.rendered;
    if (rendered?.payloadId !== payloadId) return undefined;
    this.entries.delete(executionId);
    return rendered.messages;
  }

  /** Executions with an entry now (for tests). */
  get size(): number {
    return this.entries.size;
  }
}
