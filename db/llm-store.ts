// Registered LLMs (SPEC §7). The API key is stored encrypted and only the model activity reads it.
import type { Knex } from 'knex';
import type { KeyRing } from '../infra/crypto';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { Principal } from '../domain/permissions';
import * as named from './named-resource';
import { uniqueName } from './sql-helpers';

export interface Llm extends named.Resource {
  endpoint: string;
  model: string;
  provider: string;
}

interface Row extends named.Row {
  endpoint: string;
  model: string;
  provider: string;
}

export const LLM_FIELDS: ListFields = named.fields({
  endpoint: 'string',
  model: 'string',
  provider: 'string',
});
const PUBLIC = named.columns('endpoint', 'model', 'provider');

const toLlm = (r: Row): Llm => ({
  ...named.of(r),
  endpoint: r.endpoint,
  model: r.model,
  provider: r.provider,
});
const TABLE: named.Table<Row, Llm> = {
  table: 'llms',
  label: 'LLM',
  select: PUBLIC,
  fields: LLM_FIELDS,
  toItem: toLlm,
};

export interface LlmPatch {
  name?: string;
  description?: string | null;
  endpoint?: string;
  model?: string;
  provider?: string;
  apiKey?: string;
}

export class LlmStore {
  constructor(
    private readonly db: Knex,
    private readonly keyring: KeyRing,
  ) {}

  async get(id: string): Promise<Llm | null> {
    const row = (await this.db('llms').where({ id }).first(PUBLIC)) as Row | undefined;
    return row ? toLlm(row) : null;
  }

  /** The id of the LLM named `name`, or null. */
  idByName(name: string): Promise<string | null> {
    return named.idByName(this.db, 'llms', name);
  }

  /** The connection details for a model call, API key decrypted. */
  async getForCall(id: string): Promise<{ endpoint: string; model: string; apiKey: string } | null> {
    const row = await this.db('llms').where({ id }).first('endpoint', 'model', 'api_key_cipher');
    if (!row) return null;
    return {
      endpoint: row.endpoint as string,
      model: row.model as string,
      apiKey: this.keyring.decrypt('llm-api-key', row.api_key_cipher as Buffer).toString('utf8'),
    };
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
    return named.update(this.db, TABLE, id, values);
  }

  async delete(id: string): Promise<void> {
    await this.db('llms').where({ id }).delete();
  }

  list(principal: Principal, req: ListRequest): Promise<ListPage<Llm>> {
    return named.list(this.db, TABLE, principal, req);
  }
}
