// SPEC §3 text splitters (LangChain semantics) and the SPEC §18 fragment limit of 8000 characters.
import { DEFAULT_LIMITS } from '../../domain/limits';
import { splitText } from '../../infra/text-splitters';

const MAX_FRAGMENT_CHARS = DEFAULT_LIMITS.fragmentChars;

const words = (count: number, prefix = 'w'): string =>
  Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(' ');

/** The longest suffix of `a` that is a prefix of `b`. */
function sharedOverlap(a: string, b: string): string {
  for (let length = Math.min(a.length, b.length); length > 0; length--) {
    if (b.startsWith(a.slice(-length))) return a.slice(-length);
  }
  return '';
}

beforeEach(() => {
  // LangChain's character splitter console.warns about separator-less runs longer than chunk_size.
  jest.spyOn(console, 'warn').mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

describe('recursive_character', () => {
  it('respects chunk_size and carries chunk_overlap between consecutive chunks', async () => {
    const text = words(300);
    const chunks = await splitText('recursive_character', { chunk_size: 100, chunk_overlap: 30 }, text);
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(100);
    for (let i = 1; i < chunks.length; i++) {
      const overlap = sharedOverlap(chunks[i - 1]!, chunks[i]!);
      expect(overlap.length).toBeGreaterThan(0);
      expect(overlap.length).toBeLessThanOrEqual(30);
    }
    // Every word is kept, in order (overlapping words appear twice).
    const seen = chunks.join(' ').split(' ');
    expect([...new Set(seen)]).toEqual(text.split(' '));
  });

  it('without overlap, the chunks are the text cut at separators', async () => {
    const text = words(200);
    const chunks = await splitText('recursive_character', { chunk_size: 64, chunk_overlap: 0 }, text);
    expect(chunks.join(' ')).toBe(text);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(64);
  });

  it('prefers paragraphs, then lines, then words, then characters ("\\n\\n", "\\n", " ", "")', async () => {
    const p1 = 'First paragraph, which is short enough to be a chunk of its own.';
    const p2 = 'Second paragraph, also short enough to stand alone in one chunk.';
    const longLines = `${'Line one of a long paragraph that'} has many words\n${'line two of the same paragraph, also'} long`;
    const noSpaces = 'x'.repeat(150);
    const text = `${p1}\n\n${p2}\n\n${longLines}\n\n${noSpaces}`;
    const chunks = await splitText('recursive_character', { chunk_size: 80, chunk_overlap: 0 }, text);
    expect(chunks.slice(0, 2)).toEqual([p1, p2]); // two paragraphs together exceed 80
    expect(chunks.slice(2, 4)).toEqual(longLines.split('\n')); // the long paragraph at its lines
    // No separator left: characters. The "\n" kept before the run counts towards the first chunk
    // and is then trimmed away (LangChain's keepSeparator + trim), hence 79.
    expect(chunks.slice(4)).toEqual(['x'.repeat(79), 'x'.repeat(71)]);
  });

  it('merges small paragraphs up to chunk_size', async () => {
    const text = 'a1 a2\n\nb1 b2\n\nc1 c2';
    expect(await splitText('recursive_character', { chunk_size: 1000, chunk_overlap: 0 }, text)).toEqual([
      text,
    ]);
    expect(await splitText('recursive_character', { chunk_size: 12, chunk_overlap: 0 }, text)).toEqual([
      'a1 a2\n\nb1 b2',
      'c1 c2',
    ]);
  });

  it('empty or blank text has no chunks', async () => {
    for (const text of ['', '   \n\n  ']) {
      expect(await splitText('recursive_character', { chunk_size: 10, chunk_overlap: 2 }, text)).toEqual([]);
    }
  });

  it('rejects an overlap not smaller than the chunk size, as LangChain does', async () => {
    await expect(
      splitText('recursive_character', { chunk_size: 10, chunk_overlap: 10 }, 'x'),
    ).rejects.toThrow(/chunkOverlap/);
  });
});

describe('character', () => {
  it('splits at "\\n\\n" by default, not at single newlines', async () => {
    const text = 'one\ntwo\n\nthree\nfour\n\nfive';
    const chunks = await splitText('character', { chunk_size: 10, chunk_overlap: 0 }, text);
    expect(chunks).toEqual(['one\ntwo', 'three\nfour', 'five']);
  });

  it('splits at a custom separator, merging pieces up to chunk_size with the separator', async () => {
    const text = 'aa|bb|cc|dd|ee';
    expect(await splitText('character', { chunk_size: 5, chunk_overlap: 0, separator: '|' }, text)).toEqual([
      'aa|bb',
      'cc|dd',
      'ee',
    ]);
    expect(await splitText('character', { chunk_size: 8, chunk_overlap: 3, separator: '|' }, text)).toEqual([
      'aa|bb|cc',
      'cc|dd|ee',
    ]);
  });

  it('keeps a separator-less run longer than chunk_size whole, as LangChain does, up to the limit', async () => {
    const run = 'y'.repeat(5000);
    const chunks = await splitText(
      'character',
      { chunk_size: 1000, chunk_overlap: 0, separator: '|' },
      `a|${run}|b`,
    );
    expect(chunks).toEqual(['a', run, 'b']);
  });
});

describe(`fragment limit (SPEC §18: ${MAX_FRAGMENT_CHARS} characters)`, () => {
  it('re-splits a character chunk over the limit with the recursive splitter of the same size', async () => {
    const long = `${words(2500, 'z')}`; // about 15,000 characters without the separator
    expect(long.length).toBeGreaterThan(MAX_FRAGMENT_CHARS);
    const chunks = await splitText(
      'character',
      { chunk_size: 1000, chunk_overlap: 0 },
      `intro\n\n${long}\n\noutro`,
    );
    expect(chunks[0]).toBe('intro');
    expect(chunks[chunks.length - 1]).toBe('outro');
    const middle = chunks.slice(1, -1);
    for (const chunk of middle) expect(chunk.length).toBeLessThanOrEqual(1000);
    expect(middle.join(' ')).toBe(long);
  });

  it('no chunk of either splitter exceeds the limit, even at chunk_size 8000', async () => {
    const text = `${'q'.repeat(30_000)}\n\n${words(3000)}`;
    for (const provider of ['recursive_character', 'character'] as const) {
      const chunks = await splitText(provider, { chunk_size: 8000, chunk_overlap: 200 }, text);
      for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(MAX_FRAGMENT_CHARS);
      expect(chunks.join('').replace(/[^q]/g, '').length).toBeGreaterThanOrEqual(30_000);
    }
  });

  it('a chunk_size above a configured lower limit is lowered to it', async () => {
    const chunks = await splitText(
      'recursive_character',
      { chunk_size: 500, chunk_overlap: 400 },
      words(400),
      100,
    );
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(100);
  });
});
