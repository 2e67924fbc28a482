// Stored chains (SPEC §13 CH-1) and the lock the admission of their executions takes (CH-4). Chains are
// addressed by their `chain_<hex>` id, which is also the id permission grants name. A chain's
// steps reference stored prompts (`prompt_references`, source 'chain'), so a prompt a chain uses
// cannot be deleted (PC-1).
import type { Knex } from 'knex';
import type { ChainStepDefinition } from '../domain/chain-run';
import { NotFound } from '../domain/errors';
import type { Principal } from '../domain/permissions';
import * as named from './named-resource';
import { readableOldestFirst } from './sql-helpers';
import type { PromptStore } from './prompt-store';

interface ChainGuardrails {
  rateLimitPerMinute?: number;
  maxTokensPerExecution?: number;
}

interface ChainDefinition {
  name: string;
  description: string | null;
  steps: ChainStepDefinition[];
  tags: string[];
  stopOnError: boolean;
  maxConcurrency: number;
  metadata: Record<string, unknown>;
  guardrails: ChainGuardrails;
}

/** What admission finds under the chain's lock (CH-4). */
interface ChainOccupancy {
  /** Executions of the chain whose records read `running`. */
  running: number;
  maxConcurrency: number;
}

export interface StoredChain extends ChainDefinition, named.Owned {
  totalExecutions: number;
  lastExecutedAt: Date | null;
}

interface Row extends named.OwnedRow {
  name: string;
  description: string | null;
  steps: ChainStepDefinition[];
  tags: string[];
  stop_on_error: boolean;
  max_concurrency: number;
  metadata: Record<string, unknown>;
  guardrails: ChainGuardrails;
  total_executions: number;
  last_executed_at: Date | null;
}

const toChain = (r: Row): StoredChain => ({
  ...named.ownedOf(r),
  name: r.name,
  description: r.description,
  steps: r.steps,
  tags: r.tags,
  stopOnError: r.stop_on_error,
  maxConcurrency: r.max_concurrency,
  metadata: r.metadata,
  guardrails: r.guardrails,
  totalExecutions: r.total_executions,
  lastExecutedAt: r.last_executed_at,
});

export class ChainStore {
  constructor(
    private readonly db: Knex,
    private readonly prompts: PromptStore,
  ) {}

  async get(id: string): Promise<StoredChain | null> {
    const row = (await this.db('chains').where({ id }).first()) as Row | undefined;
    return row ? toChain(row) : null;
  }

  /** Writes the chain and the prompts its steps use in one transaction. */
  async create(chain: ChainDefinition & { id: string; ownerKeyId: string }): Promise<StoredChain> {
    const now = new Date();
    return this.db.transaction(async (trx) => {
      const [row] = await trx('chains')
        .insert({
          id: chain.id,
          name: chain.name,
          description: chain.description,
          steps: JSON.stringify(chain.steps),
          tags: JSON.stringify(chain.tags),
          stop_on_error: chain.stopOnError,
          max_concurrency: chain.maxConcurrency,
          metadata: JSON.stringify(chain.metadata),
          guardrails: JSON.stringify(chain.guardrails),
          owner_key_id: chain.ownerKeyId,
          created_at: now,
          updated_at: now,
        })
        .returning('*');
      await this.prompts.setReferences(
        'chain',
        chain.id,
        chain.steps.map((s) => s.promptId),
        trx,
      );
      return toChain(row as Row);
    });
  }

  async delete(id: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      await this.prompts.setReferences('chain', id, [], trx);
      await trx('chains').where({ id }).delete();
    });
  }

  /** Every chain the principal may read, oldest first (seed 002 lists are not paginated). */
  async listReadable(principal: Principal): Promise<StoredChain[]> {
    const rows = await readableOldestFirst(this.db, 'chains', principal, 'chains');
    return (rows as Row[]).map(toChain);
  }

  /**
   * The lock behind CH-4 maxConcurrency, exact under concurrent requests: the chain row is locked,
   * its running executions counted, and `create` (which decides admission from the count and
   * writes the execution record through `trx`) runs before the lock is released, so the next
   * admission counts it. The chain's usage is updated in the same transaction when `create` returns.
   */
  async admit<T>(
    id: string,
    create: (trx: Knex.Transaction, occupancy: ChainOccupancy) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (trx) => {
      const chain = (await trx('chains').where({ id }).forUpdate().first('max_concurrency')) as
        Pick<Row, 'max_concurrency'> | undefined;
      if (!chain) throw new NotFound(`Chain ${id} not found`);
      const [{ running }] = (await trx('executions')
        .where({ chain_id: id, kind: 'chain', status: 'running' })
        .count({ running: '*' })) as [{ running: number }];
      const result = await create(trx, { running: Number(running), maxConcurrency: chain.max_concurrency });
      await trx('chains')
        .where({ id })
        .update({ total_executions: trx.raw('total_executions + 1'), last_executed_at: new Date() });
      return result;
    });
  }
}
