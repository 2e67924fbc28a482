// Agents and their versions (SPEC §8, AG-11). Each update stores the new definition as the next
// version in the same transaction, so every version an execution names stays readable.
import type { Knex } from 'knex';
import type { AgentDefinition } from '../domain/agent-definition';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { Principal } from '../domain/permissions';
import { LRUCache } from 'lru-cache';
import { LookupCache } from '../infra/lookup-cache';
import * as named from './named-resource';
import { uniqueName } from './sql-helpers';

export interface Agent extends AgentDefinition, named.Resource {
  version: number;
}

interface Row extends named.Row {
  prompt: AgentDefinition['prompt'];
  placeholders: AgentDefinition['placeholders'];
  metadata: AgentDefinition['metadata'];
  tools: AgentDefinition['tools'];
  version: number;
}

/** What a version keeps: the whole definition as it was. */
interface AgentVersion extends AgentDefinition {
  name: string;
  description: string | null;
  version: number;
  created_at: Date;
}

export const AGENT_FIELDS: ListFields = named.fields({ version: 'number' });
const SELECT = named.columns('prompt', 'placeholders', 'metadata', 'tools', 'version');

const toAgent = (r: Row): Agent => ({
  ...named.of(r),
  prompt: r.prompt,
  placeholders: r.placeholders,
  metadata: r.metadata,
  tools: r.tools,
  version: r.version,
});
const TABLE: named.Table<Row, Agent> = {
  table: 'agents',
  label: 'Agent',
  select: SELECT,
  fields: AGENT_FIELDS,
  toItem: toAgent,
};

const json = (def: AgentDefinition) => ({
  prompt: JSON.stringify(def.prompt),
  placeholders: JSON.stringify(def.placeholders),
  metadata: JSON.stringify(def.metadata),
  tools: JSON.stringify(def.tools),
});

function versionOf(agent: Agent): Omit<AgentVersion, 'created_at'> {
  const { name, description, prompt, placeholders, metadata, tools, version } = agent;
  return { name, description, prompt, placeholders, metadata, tools, version };
}

/** Versions kept in memory: a version never changes, so a copy is good until pushed out. */
const VERSIONS_KEPT = 1000;

export class AgentStore {
  private readonly versions = new LRUCache<string, Promise<AgentVersion | null>>({ max: VERSIONS_KEPT });

  constructor(
    private readonly db: Knex,
    /** Copies for the execute path; this store's update and delete invalidate them. */
    private readonly cache = new LookupCache<Agent | null>(),
  ) {}

  async get(id: string): Promise<Agent | null> {
    const row = (await this.db('agents').where({ id }).first(SELECT)) as Row | undefined;
    return row ? toAgent(row) : null;
  }

  /**
   * `get` from a copy at most LOOKUP_CACHE_TTL_MS old (a change through this store is seen at
   * once; infra/lookup-cache.ts). The object is shared: callers must not modify it.
   */
  getCached(id: string): Promise<Agent | null> {
    return this.cache.get(id, () => this.get(id));
  }

  /** The id of the agent named `name`, or null. */
  idByName(name: string): Promise<string | null> {
    return named.idByName(this.db, 'agents', name);
  }

  /** `alsoWrite` runs in the same transaction (the agent's prompt references, AG-10). */
  async create(
    agent: { id: string; name: string; description: string | null; ownerKeyId: string } & AgentDefinition,
    alsoWrite?: (trx: Knex) => Promise<void>,
  ): Promise<Agent> {
    const now = new Date();
    return uniqueName(TABLE.label, agent.name, () =>
      this.db.transaction(async (trx) => {
        const [row] = await trx('agents')
          .insert({
            ...named.newRow(agent, now),
            ...json(agent),
            version: 1,
          })
          .returning(SELECT);
        const created = toAgent(row as Row);
        await trx('agent_versions').insert({
          agent_id: created.id,
          version: 1,
          definition: JSON.stringify(versionOf(created)),
          created_at: now,
        });
        await alsoWrite?.(trx);
        return created;
      }),
    );
  }

  /** AG-11: writes the merged definition as the next version, if the stored version is `expected`. */
  async update(
    id: string,
    expected: number,
    next: { name: string; description: string | null } & AgentDefinition,
    alsoWrite?: (trx: Knex) => Promise<void>,
  ): Promise<Agent | null> {
    const now = new Date();
    return uniqueName(TABLE.label, next.name, () =>
      this.db.transaction(async (trx) => {
        const [row] = await trx('agents')
          .where({ id, version: expected })
          .update({
            name: next.name,
            description: next.description,
            ...json(next),
            version: expected + 1,
            updated_at: now,
          })
          .returning(SELECT);
        if (!row) return null;
        const updated = toAgent(row as Row);
        await trx('agent_versions').insert({
          agent_id: id,
          version: updated.version,
          definition: JSON.stringify(versionOf(updated)),
          created_at: now,
        });
        await alsoWrite?.(trx);
        return updated;
      }),
    ).finally(() => this.cache.invalidate(id));
  }

  /**
   * A version as it was written (AG-11): read once, then kept, since a version never changes. The
   * object is shared: callers must not modify it. Absent versions are not kept.
   */
  getVersion(id: string, version: number): Promise<AgentVersion | null> {
    const key = `${id}:${version}`;
    let held = this.versions.get(key);
    if (!held) {
      held = this.readVersion(id, version);
      this.versions.set(key, held);
      held.then(
        (v) => v === null && this.versions.delete(key),
        () => this.versions.delete(key),
      );
    }
    return held;
  }

  private async readVersion(id: string, version: number): Promise<AgentVersion | null> {
    const row = await this.db('agent_versions')
      .where({ agent_id: id, version })
      .first('definition', 'created_at');
    return row
      ? { ...(row.definition as Omit<AgentVersion, 'created_at'>), created_at: row.created_at as Date }
      : null;
  }

  async delete(id: string, alsoWrite?: (trx: Knex) => Promise<void>): Promise<void> {
    await this.db
      .transaction(async (trx) => {
        await trx('agents').where({ id }).delete();
        await alsoWrite?.(trx);
      })
      .finally(() => this.cache.invalidate(id));
  }

  list(principal: Principal, req: ListRequest): Promise<ListPage<Agent>> {
    return named.list(this.db, TABLE, principal, req);
  }
}
