// Seeded synthetic "clustered" text for the retrieval benchmark: topics with their own Zipf-weighted
// vocabularies plus a shared common vocabulary, so paragraphs of a topic embed close together and
// a query drawn from a topic's vocabulary finds that topic's paragraphs.

/** mulberry32: small, fast, seeded; the same seed gives the same corpus everywhere. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
}

const SYLLABLES = [
  'ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'qui', 'zen', 'dar', 'pel', 'sor', 'fin', 'gu', 'hax', 'jo',
  'ny', 'bri', 'cle', 'dro', 'ste', 'wan', 'ix', 'ul', 'or', 'ema', 'thi', 'pra', 'gol', 'mur', 'zy',
]; // prettier-ignore

/** Words drawn with Zipf weights (1 / rank): a few frequent words, a long tail. */
class Vocabulary {
  private readonly cumulative: number[];
  constructor(readonly words: string[]) {
    let sum = 0;
    this.cumulative = words.map((_, i) => (sum += 1 / (i + 1)));
  }
  draw(rng: Rng): string {
    const total = this.cumulative[this.cumulative.length - 1]!;
    const x = rng.next() * total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }
}

export interface CorpusOptions {
  seed: number;
  topics: number;
  wordsPerTopic: number;
  commonWords: number;
}

export interface SyntheticDocument {
  topic: number;
  content: string;
  paragraphs: number;
}

export class Corpus {
  private readonly topicVocabularies: Vocabulary[];
  private readonly common: Vocabulary;
  rng: Rng;

  constructor(readonly options: CorpusOptions) {
    this.rng = new Rng(options.seed);
    const seen = new Set<string>();
    const word = (): string => {
      for (;;) {
        let w = '';
        const n = this.rng.int(2, 4);
        for (let i = 0; i < n; i++) w += SYLLABLES[this.rng.int(0, SYLLABLES.length - 1)];
        if (!seen.has(w)) {
          seen.add(w);
          return w;
        }
      }
    };
    const list = (n: number) => Array.from({ length: n }, word);
    this.common = new Vocabulary(list(options.commonWords));
    this.topicVocabularies = Array.from(
      { length: options.topics },
      () => new Vocabulary(list(options.wordsPerTopic)),
    );
  }

  /** Continues from another random stream (same vocabularies): e.g. queries apart from documents. */
  reseed(seed: number): this {
    this.rng = new Rng(seed);
    return this;
  }

  private words(topic: number, count: number, topicShare: number): string[] {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const vocabulary = this.rng.next() < topicShare ? this.topicVocabularies[topic]! : this.common;
      out.push(vocabulary.draw(this.rng));
    }
    return out;
  }

  /**
   * One paragraph of 750–999 characters (so a recursive splitter with chunk_size 1000 and no
   * overlap keeps each paragraph as exactly one fragment: two never fit in one chunk).
   */
  paragraph(topic: number): string {
    const target = this.rng.int(750, 990);
    let text = '';
    while (text.length < target) {
      const [w] = this.words(topic, 1, 0.7);
      if (text.length + 1 + w!.length > 998) break;
      text += text ? ` ${w}` : w;
    }
    return `${text}.`;
  }

  /** A document of `paragraphs` paragraphs, 85 % from its own topic, the rest from random topics. */
  document(paragraphs: number): SyntheticDocument {
    const topic = this.rng.int(0, this.options.topics - 1);
    const parts: string[] = [];
    for (let i = 0; i < paragraphs; i++) {
      const t = this.rng.next() < 0.85 ? topic : this.rng.int(0, this.options.topics - 1);
      parts.push(this.paragraph(t));
    }
    return { topic, content: parts.join('\n\n'), paragraphs };
  }

  /** A query of 8–16 words, 80 % from one topic's vocabulary. */
  query(): { topic: number; text: string } {
    const topic = this.rng.int(0, this.options.topics - 1);
    return { topic, text: this.words(topic, this.rng.int(8, 16), 0.8).join(' ') };
  }
}
