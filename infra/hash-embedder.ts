// SPEC §3 `hash`, the built-in embedder (feature hashing, no model, no network).
import { assertSize, normalise, type Embedder } from './embedders';

// Word unigrams and bigrams, each hashed with FNV-1a (32-bit, over the UTF-8 bytes of the
// feature: "word" or "word1 word2") to a dimension and a sign, counted, then L2-normalised.
// Words are the maximal runs of \p{L}/\p{N} code points of text.toLowerCase() (locale-free). No
// Unicode normalisation: combining marks split words, so decomposed "e\u0301" differs from "é".
// The index comes from a murmur3 finaliser of the FNV hash (FNV's low bits are weak) and the sign
// from a second, differently seeded finaliser, so colliding features tend to cancel instead of
// piling up in one direction (the signed "hashing trick").
// Every feature weighs ±1 and a text of n ≥ 1 words has 2n − 1 features (an odd count), so a
// non-empty text never sums to the zero vector, even with size 1. A text without any word (empty,
// only punctuation or spaces) embeds to all zeros: it has no direction, and cosine against it is
// undefined (pgvector answers NaN), so callers should not store or search with such texts.
// Stored vectors depend on every detail here (and on `normalise` in infra/embedders.ts);
// test/unit/embedders.test.ts pins values.

// Module-level copies: a global lookup per call is slow inside vm contexts (jest measured 100×).
const imul = Math.imul;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Continue an FNV-1a hash with the UTF-8 bytes of one code point. */
function fnvCodePoint(hash: number, cp: number): number {
  let h = hash;
  if (cp < 0x80) return imul(h ^ cp, FNV_PRIME);
  if (cp < 0x800) {
    h = imul(h ^ (0xc0 | (cp >> 6)), FNV_PRIME);
  } else {
    if (cp < 0x10000) {
      h = imul(h ^ (0xe0 | (cp >> 12)), FNV_PRIME);
    } else {
      h = imul(h ^ (0xf0 | (cp >> 18)), FNV_PRIME);
      h = imul(h ^ (0x80 | ((cp >> 12) & 0x3f)), FNV_PRIME);
    }
    h = imul(h ^ (0x80 | ((cp >> 6) & 0x3f)), FNV_PRIME);
  }
  return imul(h ^ (0x80 | (cp & 0x3f)), FNV_PRIME);
}

// Word characters (\p{L} or \p{N}): a table for ASCII, a lazily filled cache for the rest of the
// BMP (0 unknown, 1 word, 2 not), the regex itself for astral code points.
const WORD_CHAR = /^[\p{L}\p{N}]$/u;
const ASCII_WORD = new Uint8Array(128).map((_, c) => (WORD_CHAR.test(String.fromCharCode(c)) ? 1 : 0));
const BMP_CLASS = new Uint8Array(0x10000);

function isWordChar(cp: number): boolean {
  if (cp < 0x80) return ASCII_WORD[cp] === 1;
  if (cp < 0x10000) {
    let kind = BMP_CLASS[cp]!;
    if (kind === 0) {
      kind = WORD_CHAR.test(String.fromCharCode(cp)) ? 1 : 2;
      BMP_CLASS[cp] = kind;
    }
    return kind === 1;
  }
  return WORD_CHAR.test(String.fromCodePoint(cp));
}

/** murmur3's 32-bit finaliser: every input bit affects every output bit. */
function fmix32(value: number): number {
  let h = value;
  h = imul(h ^ (h >>> 16), 0x85ebca6b);
  h = imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const SIGN_SEED = 0x9e3779b9;

function addFeature(vector: Float64Array, hash: number): void {
  const index = fmix32(hash) % vector.length;
  vector[index]! += fmix32(hash ^ SIGN_SEED) & 1 ? -1 : 1;
}

/**
 * SPEC §3 `hash`: feature hashing of lowercase word unigrams and bigrams (words are runs of
 * Unicode letters and digits) into `size` dimensions, L2-normalised, deterministic across
 * processes and versions. A text with no word gives the zero vector (see the note above).
 */
export function hashEmbedding(text: string, size: number): number[] {
  assertSize(size);
  const vector = new Float64Array(size);
  // One pass, no substrings: while a word is read, its bytes feed both its own hash and the
  // bigram's, which is FNV-1a of "previous word" continued from the previous word's hash.
  const lower = text.toLowerCase();
  const length = lower.length;
  let inWord = false;
  let hasPrevious = false;
  let previous = 0;
  let unigram = 0;
  let bigram = 0;
  for (let i = 0; i <= length; i++) {
    let cp = i < length ? lower.charCodeAt(i) : -1;
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < length) {
      const low = lower.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (cp >= 0 && isWordChar(cp)) {
      if (!inWord) {
        inWord = true;
        unigram = FNV_OFFSET;
        bigram = imul(previous ^ 0x20, FNV_PRIME);
      }
      unigram = fnvCodePoint(unigram, cp);
      bigram = fnvCodePoint(bigram, cp);
    } else if (inWord) {
      inWord = false;
      addFeature(vector, unigram);
      if (hasPrevious) addFeature(vector, bigram);
      hasPrevious = true;
      previous = unigram;
    }
  }
  return normalise(vector);
}

export class HashEmbedder implements Embedder {
  constructor(readonly size: number) {
    assertSize(size);
  }

  embed(texts: string[]): Promise<number[][]> {
    return Promise.resolve(texts.map((text) => hashEmbedding(text, this.size)));
  }
}
