// Property tests (DESIGN §5) of the classification closure (SPEC §4 CL-1) and the reader sets it
// resolves (CL-2), over generated hierarchies: random DAGs of up to 8 levels in random declaration
// order, compared with reachability computed here by a plain graph walk; and the same DAGs with one
// edge added against the grain, which close a cycle and must be refused.
import fc from 'fast-check';
import { buildClosure, resolveReader, type ClassificationLevel } from '../../domain/classifications';
import { InvalidInput } from '../../domain/errors';

interface Hierarchy {
  levels: ClassificationLevel[];
  /** Level → the levels it includes directly. */
  edges: Map<string, string[]>;
}

/**
 * A DAG: level i may include only levels j > i (so no cycle), declared in a shuffled order.
 */
const hierarchies: fc.Arbitrary<Hierarchy> = fc
  .integer({ min: 1, max: 8 })
  .chain((n) =>
    fc.record({
      n: fc.constant(n),
      edges: fc.array(fc.array(fc.boolean(), { minLength: n, maxLength: n }), { minLength: n, maxLength: n }),
      order: fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }),
    }),
  )
  .map(({ n, edges, order }) => {
    const name = (i: number): string => `level-${i}`;
    const includes = new Map<string, string[]>();
    for (let i = 0; i < n; i++)
      includes.set(name(i), [...Array(n).keys()].filter((j) => j > i && edges[i]![j]).map(name));
    const levels = order.map((i) => {
      // Includes declared in reverse: the closure must not rely on their order.
      const inc = [...includes.get(name(i))!].reverse();
      return inc.length > 0 ? { name: name(i), includes: inc } : { name: name(i) };
    });
    return { levels, edges: includes };
  });

/** Every level reachable from `start` through includes, itself included, sorted. */
function reachable(edges: Map<string, string[]>, start: string): string[] {
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const next of edges.get(queue.shift()!) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return [...seen].sort();
}

const names = (h: Hierarchy): string[] => h.levels.map((l) => l.name);
const isSubset = (a: string[], b: string[]): boolean => a.every((x) => b.includes(x));

describe('CL-1/CL-2 classification closure: properties', () => {
  it('each level grants exactly what it reaches through includes: itself, and closed under includes; sorted and distinct', () => {
    fc.assert(
      fc.property(hierarchies, (h) => {
        const closure = buildClosure(h.levels);
        expect(Object.keys(closure).sort()).toEqual(names(h).sort());
        for (const level of names(h)) {
          const grants = closure[level]!;
          expect(grants).toContain(level);
          for (const inc of h.edges.get(level)!) expect(isSubset(closure[inc]!, grants)).toBe(true);
          expect(grants).toEqual(reachable(h.edges, level));
          expect(grants).toEqual([...new Set(grants)].sort());
        }
      }),
    );
  });

  it('resolving is idempotent: a reader of the levels a set grants is granted that set again', () => {
    fc.assert(
      fc.property(
        hierarchies.chain((h) => fc.tuple(fc.constant(h), fc.subarray(names(h)))),
        ([h, reader]) => {
          const closure = buildClosure(h.levels);
          const once = resolveReader(reader, closure);
          expect(resolveReader(once, closure)).toEqual(once);
          expect(isSubset(reader, once)).toBe(true);
        },
      ),
    );
  });

  it('resolving is monotone: a larger reader set is granted a superset; a list is the union of its items', () => {
    fc.assert(
      fc.property(
        hierarchies.chain((h) =>
          fc
            .tuple(fc.constant(h), fc.subarray(names(h)))
            .chain(([h, big]) => fc.tuple(fc.constant(h), fc.constant(big), fc.subarray(big))),
        ),
        ([h, big, small]) => {
          const closure = buildClosure(h.levels);
          expect(isSubset(resolveReader(small, closure), resolveReader(big, closure))).toBe(true);
          const union = [...new Set(big.flatMap((level) => closure[level]!))].sort();
          expect(resolveReader(big, closure)).toEqual(union);
        },
      ),
    );
  });

  it('`exact` grants the level alone, whatever it includes', () => {
    fc.assert(
      fc.property(
        hierarchies.chain((h) => fc.tuple(fc.constant(h), fc.constantFrom(...names(h)))),
        ([h, level]) => {
          expect(resolveReader({ name: level, exact: true }, buildClosure(h.levels))).toEqual([level]);
        },
      ),
    );
  });

  it('an include against the grain that closes a cycle is refused, naming a cycle', () => {
    fc.assert(
      fc.property(
        hierarchies
          .filter((h) => h.levels.some((l) => (l.includes ?? []).length > 0))
          .chain((h) =>
            fc.tuple(fc.constant(h), fc.constantFrom(...h.levels.filter((l) => l.includes?.length))),
          ),
        ([h, from]) => {
          // `from` includes some level; a level it reaches including `from` closes a cycle.
          const below = reachable(h.edges, from.name).filter((l) => l !== from.name);
          const target = below[below.length - 1]!;
          const levels = h.levels.map((l) =>
            l.name === target ? { name: l.name, includes: [...(l.includes ?? []), from.name] } : l,
          );
          let error: unknown;
          try {
            buildClosure(levels);
          } catch (err) {
            error = err;
          }
          expect(error).toBeInstanceOf(InvalidInput);
          expect((error as Error).message).toMatch(/^Classification cycle: /);
        },
      ),
    );
  });
});
