// Execution records (audit: ids, timings, usage, status; no content) and their encrypted content
// in `execution_payloads`, deleted after the retention period (SPEC §9.3).
import type { Knex } from 'knex';
import type { KeyRing } from '../infra/crypto';

type ExecutionKind = 'agent' | 'llm_query' | 'gateway' | 'chain' | 'chain_step' | 'reference';
type ExecutionStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface ExecutionRecord {
  id: string;
  kind: ExecutionKind;
  status: ExecutionStatus;
  api_key_id: string;
  llm_id: string | null;
  agent_id: string | null;
  agent_version: number | null;
  pipeline_id: string | null;
  parent_execution_id: string | null;
  trace_id: string | null;
  workflow_id: string;
  attempts: number;
  input_tokens: number | null;
  output_tokens: number | null;
  error_status: number | null;
  error_type: string | null;
  started_at: Date;
  finished_at: Date | null;
  /** PC-11: an EXECUTE reference or a chain step, run on behalf of `parent_execution_id`. */
  is_internal: boolean;
  chain_depth: number | null;
  referenced_prompt_id: string | null;
  chain_id: string | null;
  execution_time_ms: number | null;
  /** `provider` of the LLM that answered, or `cache` (PC-5). */
  selected_provider: string | null;
  /** CH-5: chainExecutionId, chainStep, traceId, spanId (ids only). */
  metadata: Record<string, unknown> | null;
  /** PV-6: the instant used for `{{foundationallm:...}}` variables and the names resolved. */
  variables_instant: Date | null;
  variables_resolved: string[] | null;
  /** The create's `store` (issue 34): false, the content expires when the execution finishes. */
  store: boolean;
  /** When DELETE /v1/responses/{id} removed the content; the record stays for audit. */
  deleted_at: Date | null;
}

export type NewExecution = Pick<ExecutionRecord, 'id' | 'kind' | 'api_key_id' | 'workflow_id'> &
  Partial<
    Pick<
      ExecutionRecord,
      | 'llm_id'
      | 'agent_id'
      | 'agent_version'
      | 'pipeline_id'
      | 'parent_execution_id'
      | 'trace_id'
      | 'is_internal'
      | 'chain_depth'
      | 'referenced_prompt_id'
      | 'chain_id'
      | 'metadata'
      | 'store'
    >
  >;

/** A record with its request and answer content, as long as they are retained (null after). */
export interface ExecutionContent<Request, Answer> {
  record: ExecutionRecord;
  request: Request | null;
  answer: Answer | null;
}

/**
 * How long the content of a `store: false` execution outlives its end: the create that waits for
 * the answer reads it just after the workflow finished it (docs/decisions.md, "store: false").
 */
export const UNSTORED_GRACE_SECONDS = 60;

/** What an execution learnt while it ran, written to its record. */
interface ExecutionDetails {
  llm_id?: string;
  selected_provider?: string;
  variables_instant?: Date;
  variables_resolved?: string[];
  /** The model attempt that ran (the record keeps the highest). */
  attempt?: number;
}

export class ExecutionStore {
  constructor(
    private readonly db: Knex,
    private readonly keyring: KeyRing,
  ) {}

  /**
   * Writes the record and its request content before the workflow starts: one statement (a
   * data-modifying CTE is atomic), so one round trip instead of a four-statement transaction.
   * Through `db` when given: the transaction of an admission (CH-4) that must count this record.
   */
  async create(
    execution: NewExecution,
    request: { payloadId: string; content: unknown },
    db: Knex = this.db,
  ): Promise<void> {
    const now = new Date();
    const record = db('executions').insert({
      ...execution,
      status: 'running',
      attempts: 0,
      started_at: now,
    });
    const payload = db('execution_payloads').insert({
      id: request.payloadId,
      execution_id: execution.id,
      kind: 'request',
      cipher: this.keyring.encryptJson('content', request.content),
      created_at: now,
    });
    // A repeat starting the same ids again (api/start-execution.ts) keeps what was written.
    await db.raw('WITH record AS (?) ?', [
      record.onConflict('id').ignore(),
      payload.onConflict('id').ignore(),
    ]);
  }

  /**
   * The record of an execution started by a workflow (PC-11: references, chain steps), written
   * once: a retried activity finds it. `finished` records a cache hit that ran nothing.
   */
  async ensure(
    execution: NewExecution,
    finished?: { status: 'succeeded'; selected_provider: string; llm_id?: string },
  ): Promise<void> {
    const now = new Date();
    await this.db('executions')
      .insert({
        ...execution,
        ...(execution.metadata ? { metadata: JSON.stringify(execution.metadata) } : {}),
        status: finished?.status ?? 'running',
        attempts: 0,
        started_at: now,
        ...(finished
          ? {
              finished_at: now,
              execution_time_ms: 0,
              selected_provider: finished.selected_provider,
              llm_id: finished.llm_id,
            }
          : {}),
      })
      .onConflict('id')
      .ignore();
  }

  async get(id: string): Promise<ExecutionRecord | null> {
    return ((await this.db('executions').where({ id }).first()) as ExecutionRecord | undefined) ?? null;
  }

  async recordAttempt(id: string, attempt: number): Promise<void> {
    await this.detailsUpdate(id, { attempt });
  }

  /** What an execution learnt while it ran: the LLM that answered (PC-10/PC-11), its variables (PV-6). */
  async recordDetails(id: string, details: ExecutionDetails): Promise<void> {
    await this.detailsUpdate(id, details);
  }

  private detailsUpdate(id: string, details: ExecutionDetails) {
    const { variables_resolved, attempt, ...rest } = details;
    return this.db('executions')
      .where({ id })
      .update({
        ...rest,
        ...(variables_resolved ? { variables_resolved: JSON.stringify(variables_resolved) } : {}),
        ...(attempt !== undefined ? { attempts: this.db.raw('GREATEST(attempts, ?)', [attempt]) } : {}),
      });
  }

  /**
   * Idempotent: a retried activity writes the same row. Starts the content retention clock.
   * `details` go to the execution's record in the same statement (a data-modifying CTE).
   */
  async putPayload(
    payloadId: string,
    executionId: string,
    kind: string,
    content: unknown,
    details?: ExecutionDetails,
  ): Promise<void> {
    const payload = this.db('execution_payloads')
      .insert({
        id: payloadId,
        execution_id: executionId,
        kind,
        cipher: this.keyring.encryptJson('content', content),
        created_at: new Date(),
      })
      .onConflict(['execution_id', 'kind'])
      .merge(['cipher']);
    if (!details) await payload;
    else await this.db.raw('WITH record AS (?) ?', [this.detailsUpdate(executionId, details), payload]);
  }

  /** The content, or null once it has expired or was never stored. */
  async getPayload<T>(payloadId: string): Promise<T | null> {
    const row = await this.db('execution_payloads')
      .where({ id: payloadId })
      .andWhere((w) => w.whereNull('expires_at').orWhere('expires_at', '>', new Date()))
      .first('cipher');
    return row ? this.keyring.decryptJson<T>('content', row.cipher as Buffer) : null;
  }

  async finish(
    id: string,
    outcome: {
      status: Exclude<ExecutionStatus, 'running'>;
      usage?: { input_tokens: number; output_tokens: number };
      error?: { status: number; type: string };
    },
    retentionSeconds: number,
  ): Promise<void> {
    const finishedAt = new Date();
    const record = this.db('executions')
      .where({ id })
      .update({
        status: outcome.status,
        finished_at: finishedAt,
        input_tokens: outcome.usage?.input_tokens ?? null,
        output_tokens: outcome.usage?.output_tokens ?? null,
        error_status: outcome.error?.status ?? null,
        error_type: outcome.error?.type ?? null,
        execution_time_ms: this.db.raw(
          'GREATEST(0, ROUND(EXTRACT(EPOCH FROM (?::timestamptz - started_at)) * 1000))::int',
          [finishedAt],
        ),
      });
    const kept = (seconds: number) => new Date(finishedAt.getTime() + seconds * 1000);
    // `store: false` (issue 34): the content goes with the execution, after a short grace.
    const payloads = this.db('execution_payloads')
      .where({ execution_id: id })
      .update({
        expires_at: this.db.raw(
          'CASE WHEN (SELECT store FROM executions WHERE id = ?) THEN ?::timestamptz ELSE ?::timestamptz END',
          [id, kept(retentionSeconds), kept(Math.min(UNSTORED_GRACE_SECONDS, retentionSeconds))],
        ),
      });
    // One statement, atomic like the transaction it replaces, in one round trip.
    await this.db.raw('WITH record AS (?) ?', [record, payloads]);
  }

  /**
   * The record with its request and answer while they are retained, in one statement (a response's
   * GET, its input items, a `previous_response_id`); null for an unknown id.
   */
  async content<Request, Answer>(id: string): Promise<ExecutionContent<Request, Answer> | null> {
    const now = new Date();
    const live = (alias: string) =>
      `LEFT JOIN execution_payloads ${alias} ON ${alias}.execution_id = e.id AND ${alias}.kind = ?` +
      ` AND (${alias}.expires_at IS NULL OR ${alias}.expires_at > ?)`;
    const { rows } = (await this.db.raw(
      `SELECT e.*, q.cipher AS request_cipher, a.cipher AS answer_cipher FROM executions e ${live('q')} ${live('a')} WHERE e.id = ?`,
      ['request', now, 'answer', now, id],
    )) as { rows: (ExecutionRecord & { request_cipher: Buffer | null; answer_cipher: Buffer | null })[] };
    const row = rows[0];
    if (!row) return null;
    const { request_cipher, answer_cipher, ...record } = row;
    const decrypt = <T>(cipher: Buffer | null) =>
      cipher ? this.keyring.decryptJson<T>('content', cipher) : null;
    return { record, request: decrypt<Request>(request_cipher), answer: decrypt<Answer>(answer_cipher) };
  }

  /** DELETE /v1/responses/{id}: the content goes now, the record says when; one statement. */
  async deleteContent(id: string): Promise<void> {
    const record = this.db('executions').where({ id }).update({ deleted_at: new Date() });
    const payloads = this.db('execution_payloads').where({ execution_id: id }).delete();
    await this.db.raw('WITH record AS (?) ?', [record, payloads]);
  }

  /** Deletes content whose retention has passed; records stay for audit. */
  async deleteExpiredPayloads(now = new Date()): Promise<number> {
    return this.db('execution_payloads').where('expires_at', '<=', now).delete();
  }

  /** DX-1: the stored answer of an execution while its content is retained, else null. */
  async getAnswer<T>(executionId: string): Promise<T | null> {
    const row = await this.db('execution_payloads')
      .where({ execution_id: executionId, kind: 'answer' })
      .andWhere((w) => w.whereNull('expires_at').orWhere('expires_at', '>', new Date()))
      .first('cipher');
    return row ? this.keyring.decryptJson<T>('content', row.cipher as Buffer) : null;
  }

  /** When the execution's answer was stored (its record may not say it finished yet). */
  async answerStoredAt(executionId: string): Promise<Date | null> {
    const row = await this.db('execution_payloads')
      .where({ execution_id: executionId, kind: 'answer' })
      .first('created_at');
    return (row?.created_at as Date | undefined) ?? null;
  }

  /** Chain executions still marked running that started before `before` (CH-4 reconciliation). */
  async runningChainExecutions(
    chainId: string,
    before: Date,
  ): Promise<Pick<ExecutionRecord, 'id' | 'workflow_id'>[]> {
    return (await this.db('executions')
      .where({ chain_id: chainId, kind: 'chain', status: 'running' })
      .andWhere('started_at', '<', before)
      .select('id', 'workflow_id')) as Pick<ExecutionRecord, 'id' | 'workflow_id'>[];
  }
}
