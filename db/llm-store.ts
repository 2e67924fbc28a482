// Registered LLMs (SPEC §7). The API key is stored encrypted and only the model activity reads it.
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { LookupCache } from '../infra/lookup-cache';
import type { KeyRing } from '../infra/crypto';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { Principal } from '../domain/permissions';
import * as named from './named-resource';
import { uniqueName } from './sql-helpers';

export interface Llm extends named.Resource {
  endpoint: string;
  model: string;
  provider: string;
  /** Model calls are background responses that a retry resumes (issue 27). */
  resumable: boolean;
}

interface Row extends named.Row {
  endpoint: string;
  model: string;
  provider: string;
  resumable: boolean;
}

export const LLM_FIELDS: ListFields = named.fields({
  endpoint: 'string',
  model: 'string',
  provider: 'string',
  resumable: 'boolean',
});
const PUBLIC = named.columns('endpoint', 'model', 'provider', 'resumable');

const toLlm = (r: Row): Llm => ({
  ...named.of(r),
  endpoint: r.endpoint,
  model: r.model,
  provider: r.provider,
  resumable: r.resumable,
});
const TABLE: named.Table<Row, Llm> = {
  table: 'llms',
  label: 'LLM',
  select: PUBLIC,
  fields: LLM_FIELDS,
  toItem: toLlm,
};

interface LlmPatch {
  name?: string;
  description?: string | null;
  endpoint?: string;
  model?: string;
  provider?: string;
  resumable?: boolean;
  apiKey?: string;
}

/** What a model call needs of an LLM, its API key decrypted. */
interface LlmConnection {
  endpoint: string;
  model: string;
  apiKey: string;
  /** Background responses, resumed by a retry (issue 27). */
  resumable: boolean;
}

/** Decrypted connections kept (LLMs are few). */
const CONNECTIONS_KEPT = 256;

export class LlmStore {
  /** Copies for the execute path and the model call; this store's update and delete invalidate them. */
  private readonly lookups: LookupCache<Llm | null>;
  private readonly calls: LookupCache<LlmConnection | null>;
  /** The decrypted connection of each LLM's current version (its `updated_at`). */
  private readonly connections = new LRUCache<string, { updatedAt: number; connection: LlmConnection }>({
    max: CONNECTIONS_KEPT,
  });

  constructor(
    private readonly db: Knex,
    private readonly keyring: KeyRing,
    cacheMs?: number,
  ) {
    this.lookups = new LookupCache(cacheMs);
    this.calls = new LookupCache(cacheMs);
  }

  async get(id: string): Promise<Llm | null> {
    const row = (await this.db('llms').where({ id }).first(PUBLIC)) as Row | undefined;
    return row ? toLlm(row) : null;
  }

  /** The id of the LLM named `name`, or null. */
  idByName(name: string): Promise<string | null> {
    return named.idByName(this.db, 'llms', name);
  }

  /**
   * `get` from a copy at most LOOKUP_CACHE_TTL_MS old (a change through this store is seen at
   * once; infra/lookup-cache.ts). The object is shared: callers must not modify it.
   */
  getCached(id: string): Promise<Llm | null> {
    return this.lookups.get(id, () => this.get(id));
  }

  /**
   * The connection details for a model call, from a copy at most LOOKUP_CACHE_TTL_MS old. The
   * API key is decrypted once per version of the LLM: the same object is returned until the LLM
   * changes, so that a client built for it can be kept (infra/model-clients.ts).
   */
  getForCall(id: string): Promise<LlmConnection | null> {
    return this.calls.get(id, async () => {
      const row = await this.db('llms')
        .where({ id })
        .first('endpoint', 'model', 'resumable', 'api_key_cipher', 'updated_at');
      if (!row) return null;
      const updatedAt = (row.updated_at as Date).getTime();
      const held = this.connections.get(id);
      if (held?.updatedAt === updatedAt) return held.connection;
      const connection: LlmConnection = {
        endpoint: row.endpoint as string,
        model: row.model as string,
        resumable: row.resumable === true,
        apiKey: this.keyring.decrypt('llm-api-key', row.api_key_cipher as Buffer).toString('utf8'),
      };
      this.connections.set(id, { updatedAt, connection });
      return connection;
    });
  }

  private invalidate(id: string): void {
    this.lookups.invalidate(id);
    this.calls.invalidate(id);
    this.connections.delete(id);
  }

  async create(llm: Omit<Llm, 'created_at' | 'updated_at'> & { apiKey: string }): Promise<Llm> {
    const now = new Date();
    const [row] = await uniqueName(TABLE.label, llm.name, () =>
      this.db('llms')
        .insert({
          ...named.newRow(llm, now),
          endpoint: llm.endpoint,
          model: llm.model,
          provider: llm.provider,
          resumable: llm.resumable,
          api_key_cipher: this.keyring.encrypt('llm-api-key', llm.apiKey),
        })
        .returning(PUBLIC),
    );
    return toLlm(row as Row);
  }

  async update(id: string, patch: LlmPatch): Promise<Llm> {
    const { apiKey, ...fields } = patch;
    const values: Record<string, unknown> = { ...fields };
    if (apiKey !== undefined) values.api_key_cipher = this.keyring.encrypt('llm-api-key', apiKey);
    return named.update(this.db, TABLE, id, values).finally(() => this.invalidate(id));
  }

  async delete(id: string): Promise<void> {
    await this.db('llms')
      .where({ id })
      .delete()
      .finally(() => this.invalidate(id));
  }

  list(principal: Principal, req: ListRequest): Promise<ListPage<Llm>> {
    return named.list(this.db, TABLE, principal, req);
  }
}
