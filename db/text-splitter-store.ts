// Text splitters (SPEC §3): a provider and its parameters, referenced by pipelines.
import type { Knex } from 'knex';
import { Conflict } from '../domain/errors';
import type { ListFields, ListPage, ListRequest } from '../domain/list-params';
import type { Principal } from '../domain/permissions';
import type { SplitterParameters, SplitterProvider } from '../infra/text-splitters';
import {
  listNamed,
  namedColumns,
  namedFields,
  namedOf,
  type NamedResource,
  type NamedRow,
} from './named-resource';
import { uniqueName } from './sql-helpers';

export interface TextSplitter extends NamedResource {
  provider: SplitterProvider;
  parameters: SplitterParameters;
}

interface Row extends NamedRow {
  provider: SplitterProvider;
  parameters: SplitterParameters;
}

export const TEXT_SPLITTER_FIELDS: ListFields = namedFields({ provider: 'string' });
const SELECT = namedColumns('provider', 'parameters');

const toSplitter = (r: Row): TextSplitter => ({
  ...namedOf(r),
  provider: r.provider,
  parameters: r.parameters,
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
    const table = {
      table: 'text_splitters',
      select: SELECT,
      fields: TEXT_SPLITTER_FIELDS,
      toItem: toSplitter,
    } as const;
    return listNamed<Row, TextSplitter>(this.db, table, principal, req);
  }
}
