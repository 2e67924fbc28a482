// API keys (SPEC §2). Only an HMAC of each secret is stored (AUTH-1).
import type { Knex } from 'knex';
import type { ListPage, ListRequest, ListFields } from '../domain/list-params';
import type { Principal } from '../domain/permissions';
import * as named from './named-resource';
import { uniqueName } from './sql-helpers';

export interface ApiKey extends named.Resource {
  permissions: string[];
}

interface Row extends named.Row {
  permissions: string[];
}

export const API_KEY_FIELDS: ListFields = named.fields();
const PUBLIC = named.columns('permissions');

const toKey = (r: Row): ApiKey => ({ ...named.of(r), permissions: r.permissions });
const TABLE: named.Table<Row, ApiKey> = {
  table: 'api_keys',
  label: 'API key',
  select: PUBLIC,
  fields: API_KEY_FIELDS,
  toItem: toKey,
};

export class ApiKeyStore {
  constructor(private readonly db: Knex) {}

  /** What authentication needs, in one indexed lookup. */
  async findCredentials(id: string): Promise<{ permissions: string[]; secretHmac: Buffer } | null> {
    const row = await this.db('api_keys').where({ id }).first('permissions', 'secret_hmac');
    return row ? { permissions: row.permissions as string[], secretHmac: row.secret_hmac as Buffer } : null;
  }

  async get(id: string): Promise<ApiKey | null> {
    const row = (await this.db('api_keys').where({ id }).first(PUBLIC)) as Row | undefined;
    return row ? toKey(row) : null;
  }

  async create(key: Omit<ApiKey, 'created_at' | 'updated_at'> & { secretHmac: Buffer }): Promise<ApiKey> {
    const now = new Date();
    const [row] = await uniqueName(TABLE.label, key.name, () =>
      this.db('api_keys')
        .insert({
          ...named.newRow(key, now),
          permissions: JSON.stringify(key.permissions),
          secret_hmac: key.secretHmac,
        })
        .returning(PUBLIC),
    );
    return toKey(row as Row);
  }

  async update(
    id: string,
    patch: { name?: string; description?: string | null; permissions?: string[] },
  ): Promise<ApiKey> {
    const values: Record<string, unknown> = {};
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.description !== undefined) values.description = patch.description;
    if (patch.permissions !== undefined) values.permissions = JSON.stringify(patch.permissions);
    return named.update(this.db, TABLE, id, values);
  }

  async delete(id: string): Promise<void> {
    await this.db('api_keys').where({ id }).delete();
  }

  list(principal: Principal, req: ListRequest): Promise<ListPage<ApiKey>> {
    return named.list(this.db, TABLE, principal, req);
  }

  /** AUTH-4: the configured bootstrap admin key exists with exactly this secret. */
  async ensureAdmin(id: string, secretHmac: Buffer): Promise<void> {
    const now = new Date();
    await this.db('api_keys')
      .insert({
        id,
        name: 'bootstrap-admin',
        description: 'Bootstrap administrator key (from configuration)',
        permissions: JSON.stringify(['admin']),
        secret_hmac: secretHmac,
        owner_key_id: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict('id')
      .merge({ secret_hmac: secretHmac, permissions: JSON.stringify(['admin']) });
  }
}
