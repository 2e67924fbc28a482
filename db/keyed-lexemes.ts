// No words at rest (issue 29 item 8): a fragment's tsvector holds PostgreSQL's own lexemes
// (`to_tsvector` of the pipeline's configuration: same parser, dictionaries, positions and
// weights) with each lexeme replaced by its keyed hash (infra/crypto.ts, `lexemeHashers`), and a
// query is `websearch_to_tsquery` with each lexeme replaced the same way, its operators kept. So
// `@@`, phrases and `ts_rank_cd` see the same structure as over the words (SR-1), and the stored
// vector reads as hashes. The hashing runs here, in the application: the key never goes to SQL.
import type { Knex } from 'knex';
import type { KeyRing } from '../infra/crypto';

/** A lexeme as the text forms of `tsquery` and `tsvector` quote it: `'…'`, `'` and `\` doubled. */
const QUOTED_LEXEME = /'((?:[^'\\]|''|\\.)*)'/g;

/**
 * The text form of a tsquery (`websearch_to_tsquery(…)::text`) or of a tsvector with each lexeme
 * replaced by `hash(lexeme)`: operators, phrase distances and grouping, positions and weights stay
 * as they are. websearch_to_tsquery writes no prefix (`:*`) or weight marks, so none follows a
 * lexeme of a query.
 */
export function keyedText(text: string, hash: (lexeme: string) => string): string {
  return text.replace(
    QUOTED_LEXEME,
    (_, body: string) => `'${hash(body.replace(/''|\\(.)/g, (m, c?: string) => c ?? "'"))}'`,
  );
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
    const { rows } = (await db.raw(
      'SELECT to_tsvector(?::regconfig, t.text)::text AS v FROM unnest(?::text[]) WITH ORDINALITY AS t(text, i) ORDER BY t.i',
      [config, items.map((i) => i.text)],
    )) as { rows: { v: string }[] };
    // A lexeme recurs across fragments: hashed once per call.
    const hashed = new Map<string, string>();
    const hash = (lexeme: string): string => {
      let h = hashed.get(lexeme);
      if (h === undefined) hashed.set(lexeme, (h = this.hashers[0]!(lexeme)));
      return h;
    };
    return rows.map((r) => keyedText(r.v, hash));
  }

  /**
   * `websearch_to_tsquery(config, query)` keyed under each secret, current first (fragments
   * written before a rotation hold the previous secret's hashes), or [] when the query has no
   * lexeme (stop words only: it matches nothing, as the plain query did). Read on `db`.
   */
  async queries(config: string, query: string, db = this.db): Promise<string[]> {
    const { rows } = (await db.raw('SELECT websearch_to_tsquery(?::regconfig, ?)::text AS q', [
      config,
      query,
    ])) as { rows: { q: string }[] };
    const text = rows[0]!.q;
    return text === '' ? [] : this.hashers.map((hash) => keyedText(text, hash));
  }
}
