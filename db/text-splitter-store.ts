// Text splitters (SPEC §3): a provider and its parameters, referenced by pipelines.
import type { Knex } from 'knex';
import { Conflict } from '../domain/errors';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { Principal } from '../domain/permissions';
import type { SplitterParameters, SplitterProvider } from '../infra/text-splitters';
import * as named from './named-resource';
import { uniqueName } from './sql-helpers';

export interface TextSplitter extends named.Resource {
  provider: SplitterProvider;
  parameters: SplitterParameters;
}

interface Row extends named.Row {
  provider: SplitterProvider;
  parameters: SplitterParameters;
}

export const TEXT_SPLITTER_FIELDS: ListFields = named.fields({ provider: 'string' });
const SELECT = named.columns('provider', 'parameters');

const toSplitter = (r: Row): TextSplitter => ({
  ...named.of(r),
  provider: r.provider,
  parameters: r.parameters,
});
const TABLE: named.Table<Row, TextSplitter> = {
  table: 'text_splitters',
  label: 'Text splitter',
  select: SELECT,
  fields: TEXT_SPLITTER_FIELDS,
  toItem: toSplitter,
};

export class TextSplitterStore {
  constructor(private readonly db: Knex) {}

  async get(id: string): Promise<TextSplitter | null> {
    const row = (await this.db('text_splitters').where({ id }).first(SELECT)) as Row | undefined;
    return row ? toSplitter(row) : null;
  }

  async create(splitter: Omit<TextSplitter, 'created_at' | 'updated_at'>): Promise<TextSplitter> {
    const now = new Date();
    const [row] = await uniqueName(TABLE.label, splitter.name, () =>
      this.db('text_splitters')
        .insert({
          ...named.newRow(splitter, now),
          provider: splitter.provider,
          parameters: JSON.stringify(splitter.parameters),
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
    return named.list(this.db, TABLE, principal, req);
  }
}
