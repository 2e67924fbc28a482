import { closestName, editDistance } from '../../domain/closest-name';

describe('closestName (an unknown input name → the placeholder it most likely meant)', () => {
  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('question', 'question')).toBe(0);
    expect(editDistance('questoin', 'question')).toBe(2);
    expect(editDistance('qestion', 'question')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('picks the smallest distance, ignoring case; ties keep the order; none without candidates', () => {
    expect(closestName('questoin', ['context', 'question'])).toBe('question');
    expect(closestName('CONTEXT', ['question', 'context'])).toBe('context');
    expect(closestName('ab', ['ax', 'xb'])).toBe('ax');
    expect(closestName('anything', [])).toBeUndefined();
  });
});
