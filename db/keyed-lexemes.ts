// No words at rest (issue 29 item 8): a fragment's tsvector holds PostgreSQL's own lexemes
// (`to_tsvector` of the pipeline's configuration: same parser, dictionaries, positions and
// weights) with each lexeme replaced by its keyed hash (infra/crypto.ts, `lexemeHashers`), and a
// query is `websearch_to_tsquery` with each lexeme replaced the same way, its operators kept. So
// `@@`, phrases and `ts_rank_cd` see the same structure as over the words (SR-1), and the stored
// vector reads as hashes. The hashing runs here, in the application: the key never goes to SQL.
import type { Knex } from 'knex';
import type { KeyRing } from '../infra/crypto';

/** A lexeme as `tsquery`'s text form quotes it: `'…'` with `'` and `\` doubled. */
const QUOTED_LEXEME = /'((?:[^'\\]|''|\\.)*)'/g;

/**
 * The tsquery text `query` (`websearch_to_tsquery(…)::text`) with each lexeme replaced by
 * `hash(lexeme)`: operators, phrase distances and grouping stay as they are. websearch_to_tsquery
 * writes no prefix (`:*`) or weight marks, so none follows a lexeme.
 */
export function keyedQuery(query: string, hash: (lexeme: string) => string): string {
  return query.replace(
    QUOTED_LEXEME,
    (_, body: string) => `'${hash(body.replace(/''|\\(.)/g, (m, c?: string) => c ?? "'"))}'`,
  );
}

/** A tsvector literal's entry: the (hashed) lexeme and its positions, weight marked unless D. */
function entry(lexeme: string, positions: number[], weights: string[]): string {
  return `'${lexeme}':${positions.map((p, i) => (weights[i] === 'D' ? `${p}` : `${p}${weights[i]}`)).join(',')}`;
}

export class KeyedLexemes {
  private readonly hashers: ((lexeme: string) => string)[];

  constructor(
    private readonly db: Knex,
    keyring: KeyRing,
  ) {
    this.hashers = keyring.lexemeHashers();
  }

  /**
   * The keyed tsvector (as a literal, for a `::tsvector` parameter) of each item's text, in order,
   * under the current secret: one statement (on `db`) that runs `to_tsvector` over all of them.
   */
  async vectors(config: string, items: readonly { text: string }[], db = this.db): Promise<string[]> {
    if (items.length === 0) return [];
    const texts = items.map((i) => i.text);
    const { rows } = (await db.raw(
      `SELECT t.i::int AS i, l.lexeme, l.positions, l.weights
         FROM unnest(?::text[]) WITH ORDINALITY AS t(text, i), unnest(to_tsvector(?::regconfig, t.text)) AS l`,
      [texts, config],
    )) as { rows: { i: number; lexeme: string; positions: number[]; weights: string[] }[] };
    const hash = this.hashers[0]!;
    const entries: string[][] = texts.map(() => []);
    for (const r of rows) entries[r.i - 1]!.push(entry(hash(r.lexeme), r.positions, r.weights));
    return entries.map((e) => e.join(' '));
  }

  /**
   * `websearch_to_tsquery(config, query)` keyed under each secret, current first (fragments
   * written before a rotation hold the previous secret's hashes), or [] when the query has no
   * lexeme (stop words only: it matches nothing, as the plain query did).
   */
  async queries(config: string, query: string): Promise<string[]> {
    const { rows } = (await this.db.raw('SELECT websearch_to_tsquery(?::regconfig, ?)::text AS q', [
      config,
      query,
    ])) as { rows: { q: string }[] };
    const text = rows[0]!.q;
    return text === '' ? [] : this.hashers.map((hash) => keyedQuery(text, hash));
  }
}
