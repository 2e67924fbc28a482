// Text splitters (SPEC §3): a provider and its parameters, referenced by pipelines.
import type { Knex } from 'knex';
import { Conflict } from '../domain/errors';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { Principal } from '../domain/permissions';
import type { SplitterParameters, SplitterProvider } from '../infra/text-splitters';
import { listReadable } from './list-query';
import { uniqueName } from './sql-helpers';

export interface TextSplitter {
  id: string;
  name: string;
  description: string | null;
  provider: SplitterProvider;
  parameters: SplitterParameters;
  ownerKeyId: string | null;
  created_at: Date;
  updated_at: Date;
}

interface Row extends Record<string, unknown> {
  id: string;
  name: string;
  description: string | null;
  provider: SplitterProvider;
  parameters: SplitterParameters;
  owner_key_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const TEXT_SPLITTER_FIELDS: ListFields = {
  id: 'uuid',
  name: 'string',
  description: 'string',
  provider: 'string',
  created_at: 'timestamp',
  updated_at: 'timestamp',
};
const SELECT = [
  'id',
  'name',
  'description',
  'provider',
  'parameters',
  'owner_key_id',
  'created_at',
  'updated_at',
];

const toSplitter = (r: Row): TextSplitter => ({
  id: r.id,
  name: r.name,
  description: r.description,
  provider: r.provider,
  parameters: r.parameters,
  ownerKeyId: r.owner_key_id,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export class TextSplitterStore {
  constructor(private readonly db: Knex) {}

  async get(id: string): Promise<TextSplitter | null> {
    const row = (await this.db('text_splitters').where({ id }).first(SELECT)) as Row | undefined;
    return row ? toSplitter(row) : null;
  }

  async create(splitter: Omit<TextSplitter, 'created_at' | 'updated_at'>): Promise<TextSplitter> {
    const now = new Date();
    const [row] = await uniqueName('Text splitter', splitter.name, () =>
      this.db('text_splitters')
        .insert({
          id: splitter.id,
          name: splitter.name,
          description: splitter.description,
          provider: splitter.provider,
          parameters: JSON.stringify(splitter.parameters),
          owner_key_id: splitter.ownerKeyId,
          created_at: now,
          updated_at: now,
        })
        .returning(SELECT),
    );
    return toSplitter(row as Row);
  }

  async delete(id: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const pipeline = await trx('pipelines').where({ text_splitter_id: id }).first('name');
      const document = await trx('document_versions')
        .where({ text_splitter_id: id })
        .whereNull('expired_at')
        .first('id');
      if (pipeline || document) {
        throw new Conflict(
          `Text splitter is in use${pipeline ? ` by pipeline ${pipeline.name as string}` : ' by documents'}`,
        );
      }
      await trx('text_splitters').where({ id }).delete();
    });
  }

  list(principal: Principal, req: ListRequest): Promise<ListPage<TextSplitter>> {
    return listReadable<Row, TextSplitter>(
      this.db,
      {
        table: 'text_splitters',
        type: 'text_splitters',
        select: SELECT,
        fields: TEXT_SPLITTER_FIELDS,
        toItem: toSplitter,
        nullableText: ['description'],
      },
      principal,
      req,
    );
  }
}
