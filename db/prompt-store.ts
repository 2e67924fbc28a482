// Stored prompts (SPEC §12) and the reference graph between prompts, agents and chains. Prompts
// are addressed by their `promptId` slug, which is also the id that permission grants name.
import type { Knex } from 'knex';
import { Conflict } from '../domain/errors';
import type { Principal } from '../domain/permissions';
import * as named from './named-resource';
import { readableOldestFirst } from './sql-helpers';
import type { Attachment, PromptDefinition } from '../domain/prompt-analysis';

export interface StoredPrompt extends PromptDefinition, named.Owned {
  promptId: string;
  name: string;
}

type ReferenceSource = 'prompt' | 'agent' | 'chain';

const FOREIGN_KEY_VIOLATION = '23503';

interface Row extends named.OwnedRow {
  prompt_id: string;
  name: string;
  system_prompt: string | null;
  user_prompt: string;
  temperature: number | null;
  attachment: Attachment | null;
  routing_policy_id: string | null;
  custom_gateway_id: string | null;
  requires_attachment: boolean;
  requires_dynamic_data: boolean;
}

const toPrompt = (r: Row): StoredPrompt => ({
  ...named.ownedOf(r),
  promptId: r.prompt_id,
  name: r.name,
  systemPrompt: r.system_prompt,
  userPrompt: r.user_prompt,
  temperature: r.temperature,
  attachment: r.attachment,
  routingPolicyId: r.routing_policy_id,
  customGatewayId: r.custom_gateway_id,
  requiresAttachment: r.requires_attachment,
  requiresDynamicData: r.requires_dynamic_data,
});

const toRow = (p: PromptDefinition & { name: string }) => ({
  name: p.name,
  system_prompt: p.systemPrompt,
  user_prompt: p.userPrompt,
  temperature: p.temperature,
  attachment: p.attachment === null ? null : JSON.stringify(p.attachment),
  routing_policy_id: p.routingPolicyId,
  custom_gateway_id: p.customGatewayId,
  requires_attachment: p.requiresAttachment,
  requires_dynamic_data: p.requiresDynamicData,
});

export class PromptStore {
  constructor(private readonly db: Knex) {}

  async get(promptId: string): Promise<StoredPrompt | null> {
    const row = (await this.db('prompts').where({ prompt_id: promptId }).first()) as Row | undefined;
    return row ? toPrompt(row) : null;
  }

  async getMany(promptIds: readonly string[]): Promise<Map<string, StoredPrompt>> {
    if (promptIds.length === 0) return new Map();
    const rows = (await this.db('prompts').whereIn('prompt_id', [...new Set(promptIds)])) as Row[];
    return new Map(rows.map((r) => [r.prompt_id, toPrompt(r)]));
  }

  /** Writes the prompt and its outgoing references in one transaction. */
  async create(
    prompt: PromptDefinition & { id: string; promptId: string; name: string; ownerKeyId: string },
    references: readonly string[],
  ): Promise<StoredPrompt> {
    const now = new Date();
    try {
      return await this.db.transaction(async (trx) => {
        const [row] = await trx('prompts')
          .insert({
            id: prompt.id,
            prompt_id: prompt.promptId,
            ...toRow(prompt),
            owner_key_id: prompt.ownerKeyId,
            created_at: now,
            updated_at: now,
          })
          .returning('*');
        await this.setReferences('prompt', prompt.promptId, references, trx);
        return toPrompt(row as Row);
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw new Conflict(`Prompt id already exists: ${prompt.promptId}`);
      throw err;
    }
  }

  async update(
    promptId: string,
    next: PromptDefinition & { name: string },
    references: readonly string[],
  ): Promise<StoredPrompt | null> {
    return this.db.transaction(async (trx) => {
      const [row] = await trx('prompts')
        .where({ prompt_id: promptId })
        .update({ ...toRow(next), updated_at: new Date() })
        .returning('*');
      if (!row) return null;
      await this.setReferences('prompt', promptId, references, trx);
      return toPrompt(row as Row);
    });
  }

  /** Deletes the prompt unless something references it (PC-1: 409 naming the referrers). */
  async delete(promptId: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const referrers = (await trx('prompt_references')
        .where({ prompt_id: promptId })
        .whereNot((w) => w.where({ source_type: 'prompt', source_id: promptId }))
        .orderBy(['source_type', 'source_id'])
        .forUpdate()
        .select('source_type', 'source_id')) as { source_type: string; source_id: string }[];
      if (referrers.length > 0) {
        const names = referrers.map((r) => `${r.source_type} ${r.source_id}`).join(', ');
        throw new Conflict(`Prompt ${promptId} is referenced by ${names}`);
      }
      await trx('prompt_references').where({ source_type: 'prompt', source_id: promptId }).delete();
      try {
        await trx('prompts').where({ prompt_id: promptId }).delete();
      } catch (err) {
        if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION)
          throw new Conflict(`Prompt ${promptId} was referenced meanwhile; retry`);
        throw err;
      }
    });
  }

  /** Every prompt the principal may read, oldest first (seed 002 lists are not paginated). */
  async listReadable(principal: Principal): Promise<StoredPrompt[]> {
    const rows = await readableOldestFirst(this.db, 'prompts', principal, 'prompts', 'prompt_id');
    return (rows as Row[]).map(toPrompt);
  }

  /** Replaces the prompts a source references. */
  async setReferences(
    sourceType: ReferenceSource,
    sourceId: string,
    promptIds: readonly string[],
    trx: Knex = this.db,
  ): Promise<void> {
    await trx('prompt_references').where({ source_type: sourceType, source_id: sourceId }).delete();
    const unique = [...new Set(promptIds)];
    if (unique.length === 0) return;
    try {
      await trx('prompt_references').insert(
        unique.map((prompt_id) => ({ source_type: sourceType, source_id: sourceId, prompt_id })),
      );
    } catch (err) {
      if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION)
        throw new Conflict(`A referenced prompt was deleted meanwhile: ${unique.join(', ')}`);
      throw err;
    }
  }

  /**
   * The depth at which a prompt is referenced (PC-6): 0 when nothing references it (it runs as a
   * root: gateway, chain step), 1 when an agent template references it, one more than its
   * deepest prompt referrer otherwise. The graph is acyclic; past `bound` levels the walk stops
   * and answers Infinity (a corrupt graph, or deeper than any limit allows).
   */
  async referencedDepth(promptId: string, bound: number): Promise<number> {
    if (bound <= 0) return Number.POSITIVE_INFINITY;
    const rows = (await this.db('prompt_references')
      .where({ prompt_id: promptId })
      .whereIn('source_type', ['agent', 'prompt'])
      .select('source_type', 'source_id')) as { source_type: string; source_id: string }[];
    let depth = 0;
    for (const row of rows) {
      const above = row.source_type === 'agent' ? 0 : await this.referencedDepth(row.source_id, bound - 1);
      depth = Math.max(depth, above + 1);
    }
    return depth;
  }

  /** Whether a routing policy is used by any prompt (PC-10: 409 on delete). */
  async usingRoutingPolicy(policyId: string): Promise<string[]> {
    const rows = (await this.db('prompts')
      .where({ routing_policy_id: policyId })
      .orderBy('prompt_id')
      .select('prompt_id')) as { prompt_id: string }[];
    return rows.map((r) => r.prompt_id);
  }
}
