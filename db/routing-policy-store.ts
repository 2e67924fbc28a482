// Routing policies (SPEC §12 PC-10): an ordered list of registered LLMs tried one after another.
import type { Knex } from 'knex';
import type { Principal } from '../domain/permissions';
import * as named from './named-resource';
import { uniqueName, readableOldestFirst } from './sql-helpers';

export interface RoutingPolicy extends named.Owned {
  name: string;
  llms: string[];
}

interface Row extends named.OwnedRow {
  name: string;
  llms: string[];
}

const toPolicy = (r: Row): RoutingPolicy => ({ ...named.ownedOf(r), name: r.name, llms: r.llms });

export class RoutingPolicyStore {
  constructor(private readonly db: Knex) {}

  async get(id: string): Promise<RoutingPolicy | null> {
    const row = (await this.db('routing_policies').where({ id }).first()) as Row | undefined;
    return row ? toPolicy(row) : null;
  }

  async create(policy: {
    id: string;
    name: string;
    llms: string[];
    ownerKeyId: string;
  }): Promise<RoutingPolicy> {
    const now = new Date();
    const [row] = await uniqueName('Routing policy', policy.name, () =>
      this.db('routing_policies')
        .insert({
          id: policy.id,
          name: policy.name,
          llms: JSON.stringify(policy.llms),
          owner_key_id: policy.ownerKeyId,
          created_at: now,
          updated_at: now,
        })
        .returning('*'),
    );
    return toPolicy(row as Row);
  }

  async update(id: string, next: { name: string; llms: string[] }): Promise<RoutingPolicy | null> {
    const [row] = await uniqueName('Routing policy', next.name, () =>
      this.db('routing_policies')
        .where({ id })
        .update({ name: next.name, llms: JSON.stringify(next.llms), updated_at: new Date() })
        .returning('*'),
    );
    return row ? toPolicy(row as Row) : null;
  }

  async delete(id: string): Promise<void> {
    await this.db('routing_policies').where({ id }).delete();
  }

  async listReadable(principal: Principal): Promise<RoutingPolicy[]> {
    const rows = await readableOldestFirst(this.db, 'routing_policies', principal, 'routing_policies');
    return (rows as Row[]).map(toPolicy);
  }
}
