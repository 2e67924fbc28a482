// SPEC §6 SR-4: maximal marginal relevance over the fetch_k candidates.
import fc from 'fast-check';
import { InvalidInput } from '../../domain/errors';
import { cosineSimilarity, mmr } from '../../domain/mmr';

const c = (...embedding: number[]) => ({ embedding });

describe('SR-4 cosineSimilarity', () => {
  it('SR-4 is 1 − cosine distance, without assuming unit vectors', () => {
    expect(cosineSimilarity([1, 0], [5, 0])).toBeCloseTo(1, 12);
    expect(cosineSimilarity([1, 0], [0, 3])).toBeCloseTo(0, 12);
    expect(cosineSimilarity([1, 0], [-2, 0])).toBeCloseTo(-1, 12);
    // (3,4)·(4,3) = 24, |a||b| = 25
    expect(cosineSimilarity([3, 4], [4, 3])).toBeCloseTo(0.96, 12);
    expect(cosineSimilarity([1, 1, 0], [2, 0, 0])).toBeCloseTo(Math.SQRT1_2, 12);
  });

  it('SR-4 is 0 when either vector is all zeros', () => {
    expect(cosineSimilarity([0, 0], [1, 2])).toBe(0);
    expect(cosineSimilarity([1, 2], [0, 0])).toBe(0);
    expect(cosineSimilarity([0, 0], [0, 0])).toBe(0);
  });

  it('SR-4 dimension mismatch → InvalidInput', () => {
    expect(() => cosineSimilarity([1], [1, 2])).toThrow(InvalidInput);
  });
});

describe('SR-4 mmr', () => {
  it('SR-4 λ = 1 is plain similarity order (ties → lower index)', () => {
    const q = [1, 0];
    // angles 60°, 10°, 30°, 10° (again), 90° → similarity order 1, 3, 2, 0, 4
    const deg = (d: number) => c(Math.cos((d * Math.PI) / 180), Math.sin((d * Math.PI) / 180));
    const cands = [deg(60), deg(10), deg(30), deg(10), deg(90)];
    expect(mmr(q, cands, 5, 1)).toEqual([1, 3, 2, 0, 4]);
    expect(mmr(q, cands, 2, 1)).toEqual([1, 3]);
  });

  it('SR-4 λ = 1 equals a sort by similarity for random vectors', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -9, max: 9 }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.array(fc.integer({ min: -9, max: 9 }), { minLength: 3, maxLength: 3 }), {
          maxLength: 12,
        }),
        fc.integer({ min: 0, max: 15 }),
        (q, embs, k) => {
          const cands = embs.map((e) => ({ embedding: e }));
          const sims = cands.map((x) => cosineSimilarity(q, x.embedding));
          const expected = sims
            .map((s, i) => ({ s, i }))
            .sort((a, b) => b.s - a.s || a.i - b.i)
            .slice(0, k)
            .map((x) => x.i);
          expect(mmr(q, cands, k, 1)).toEqual(expected);
        },
      ),
    );
  });

  it('SR-4 λ = 0 picks diverse items after the most similar one', () => {
    const q = [1, 0, 0];
    const cands = [
      c(1, 0.1, 0), // 0: nearest to the query
      c(1, 0.12, 0), // 1: near-duplicate of 0
      c(0, 0, 1), // 2: orthogonal to 0
      c(0.9, 0.2, 0), // 3: also close to 0
    ];
    // First pick: most similar to q → 0. Then with λ = 0 the score is −max sim(d, selected):
    // 2 has sim ≈ 0 with 0, the others ≈ 1 → 2. Then 1 vs 3: max sim with {0, 2}:
    // sim(1,0) ≈ 0.99980, sim(3,0) ≈ 0.99293 → 3 is less redundant → 3, then 1.
    expect(mmr(q, cands, 4, 0)).toEqual([0, 2, 3, 1]);
    // λ = 1 would take the near-duplicate second.
    expect(mmr(q, cands, 2, 1)).toEqual([0, 1]);
  });

  it('SR-4 a worked 2-D example at λ = 0.5', () => {
    // q = (1, 0); candidates (not unit length):
    //   A = (2, 0)   sim(q,A) = 1
    //   B = (3, 1)   sim(q,B) = 3/√10            ≈ 0.948683
    //   C = (1, 2)   sim(q,C) = 1/√5             ≈ 0.447214
    //   D = (0, 5)   sim(q,D) = 0
    // Pairwise: sim(A,B) = 3/√10 ≈ 0.948683, sim(A,C) = 1/√5 ≈ 0.447214, sim(A,D) = 0,
    //           sim(B,C) = 5/(√10·√5) = 1/√2 ≈ 0.707107, sim(B,D) = 1/√10 ≈ 0.316228,
    //           sim(C,D) = 2/√5 ≈ 0.894427.
    // Step 1: most similar to q → A.
    // Step 2: score = 0.5·sim(q,d) − 0.5·sim(d,A)
    //   B: 0.5·0.948683 − 0.5·0.948683 = 0
    //   C: 0.5·0.447214 − 0.5·0.447214 = 0
    //   D: 0.5·0      − 0.5·0        = 0      → a three-way tie → lowest index: B.
    // Step 3: max over {A, B}
    //   C: 0.5·0.447214 − 0.5·max(0.447214, 0.707107) = 0.223607 − 0.353553 = −0.129946
    //   D: 0.5·0        − 0.5·max(0, 0.316228)        =            −0.158114 → C.
    // Step 4: D.
    const cands = [c(2, 0), c(3, 1), c(1, 2), c(0, 5)];
    expect(mmr([1, 0], cands, 4, 0.5)).toEqual([0, 1, 2, 3]);

    // Same geometry at λ = 0.3 (more diversity): step 2 scores are 0.3·s − 0.7·t
    //   B: 0.3·0.948683 − 0.7·0.948683 = −0.379473
    //   C: 0.3·0.447214 − 0.7·0.447214 = −0.178885
    //   D: 0                                     → D.
    // Step 3 over {A, D}: B: 0.284605 − 0.7·max(0.948683, 0.316228) = −0.379473
    //                     C: 0.134164 − 0.7·max(0.447214, 0.894427) = −0.491935 → B, then C.
    expect(mmr([1, 0], cands, 4, 0.3)).toEqual([0, 3, 1, 2]);
    expect(mmr([1, 0], cands, 2, 0.3)).toEqual([0, 3]);
  });

  it('SR-4 the first pick is the most similar to the query even at λ = 0', () => {
    expect(mmr([0, 1], [c(1, 0), c(1, 1), c(0, 2)], 1, 0)).toEqual([2]);
  });

  it('SR-4 stops at k or when candidates run out', () => {
    expect(mmr([1, 0], [c(1, 0), c(0, 1)], 5, 0.5)).toEqual([0, 1]);
    expect(mmr([1, 0], [], 5, 0.5)).toEqual([]);
    expect(mmr([1, 0], [c(1, 0), c(0, 1)], 0, 0.5)).toEqual([]);
  });

  it('SR-4 returns a permutation prefix of distinct indices', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }), {
          maxLength: 20,
        }),
        fc.integer({ min: 0, max: 25 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (embs, k, lambda) => {
          const out = mmr(
            [0.5, -0.5, 0.25, 1],
            embs.map((e) => ({ embedding: e })),
            k,
            lambda,
          );
          expect(out).toHaveLength(Math.min(k, embs.length));
          expect(new Set(out).size).toBe(out.length);
          for (const i of out) expect(i >= 0 && i < embs.length).toBe(true);
        },
      ),
    );
  });

  it('SR-4 invalid λ or dimensions → InvalidInput', () => {
    expect(() => mmr([1, 0], [c(1, 0)], 1, 1.5)).toThrow(InvalidInput);
    expect(() => mmr([1, 0], [c(1, 0)], 1, -0.1)).toThrow(InvalidInput);
    expect(() => mmr([1, 0], [c(1, 0), c(1, 0, 0)], 1, 0.5)).toThrow(/Candidate 1 has 3 dimensions/);
  });
});
