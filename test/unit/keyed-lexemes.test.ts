// Issue 29 item 8: the keyed hash of a lexeme and the keying of a tsquery's text form.
import { keyedText } from '../../db/keyed-lexemes';
import { KeyRing } from '../../infra/crypto';

const OLD = 'old-application-secret-0123456789abcdef';
const NEW = 'new-application-secret-fedcba9876543210';

describe('keyed lexemes (issue 29 item 8)', () => {
  it('a lexeme hashes to 12 base64url characters, the same every time, different under another secret', () => {
    const [current, previous] = new KeyRing(NEW, OLD).lexemeHashers();
    const [alone] = new KeyRing(OLD).lexemeHashers();
    expect(current!('valv')).toMatch(/^[\w-]{12}$/);
    expect(current!('valv')).toBe(new KeyRing(NEW).lexemeHashers()[0]!('valv'));
    expect(current!('valv')).not.toBe(current!('valve'));
    expect(current!('valv')).not.toBe(previous!('valv'));
    expect(previous!('valv')).toBe(alone!('valv'));
    // Its own key: not the API key secrets' HMAC of the same text.
    const ring = new KeyRing(NEW);
    expect(ring.hmac('api-key-secret', 'valv').subarray(0, 9).toString('base64url')).not.toBe(
      current!('valv'),
    );
  });

  it('keys every lexeme of a tsquery and keeps its operators, distances and grouping', () => {
    const hash = (lexeme: string) => `h(${lexeme})`;
    expect(keyedText(`'valv' <-> 'open' & !'lunch' | 'noon'`, hash)).toBe(
      `'h(valv)' <-> 'h(open)' & !'h(lunch)' | 'h(noon)'`,
    );
    expect(keyedText(`( 'a' | 'b' ) & 'c' <2> 'd'`, hash)).toBe(`( 'h(a)' | 'h(b)' ) & 'h(c)' <2> 'h(d)'`);
  });

  it('keys every lexeme of a tsvector and keeps its positions and weights', () => {
    const hash = (lexeme: string) => `h(${lexeme})`;
    expect(keyedText(`'lever':7A 'valv':2,6`, hash)).toBe(`'h(lever)':7A 'h(valv)':2,6`);
  });

  it('unquotes a lexeme as tsquery quotes it (doubled quote and backslash) before hashing', () => {
    const seen: string[] = [];
    const hash = (lexeme: string) => (seen.push(lexeme), 'x');
    expect(keyedText(`'it''s' & 'a\\\\b' & 'c'`, hash)).toBe(`'x' & 'x' & 'x'`);
    expect(seen).toEqual(["it's", 'a\\b', 'c']);
  });
});
