// DOC-2's supersession rules (domain/version-supersession.ts), decided without a database.
import { supersede, type VersionState } from '../../domain/version-supersession';

const v = (id: string, version: number, state: Partial<VersionState> = {}): VersionState => ({
  id,
  documentId: 'd',
  version,
  ready: false,
  expired: false,
  ...state,
});

describe('DOC-2 supersession', () => {
  it('a newer version becomes current and the ready one before it expires', () => {
    expect(supersede([v('old', 1, { ready: true }), v('new', 2)], new Set(['new']))).toEqual({
      current: ['new'],
      superseded: [],
      expiring: ['old'],
    });
  });

  it('a version finishing after a newer one is ready becomes ready already expired; the newer stays', () => {
    expect(supersede([v('late', 1), v('newer', 2, { ready: true })], new Set(['late']))).toEqual({
      current: [],
      superseded: ['late'],
      expiring: [],
    });
  });

  it('of two versions finishing together, the newest is current and the other superseded', () => {
    const result = supersede([v('a', 3), v('b', 5), v('c', 4, { ready: true })], new Set(['a', 'b']));
    expect(result).toEqual({ current: ['b'], superseded: ['a'], expiring: ['c'] });
  });

  it('a retried completion of a ready version changes nothing', () => {
    expect(
      supersede(
        [v('old', 1, { ready: true, expired: true }), v('cur', 2, { ready: true })],
        new Set(['cur']),
      ),
    ).toEqual({
      current: [],
      superseded: [],
      expiring: [],
    });
  });

  it('an older version already expired is not expired again; a version still ingesting is left alone', () => {
    const result = supersede(
      [v('gone', 1, { ready: true, expired: true }), v('pending', 3), v('new', 2)],
      new Set(['new']),
    );
    expect(result).toEqual({ current: ['new'], superseded: [], expiring: [] });
  });

  it("documents are decided apart: one document's newer version does not expire another's", () => {
    const other = { ...v('x', 9, { ready: true }), documentId: 'e' };
    expect(supersede([v('old', 1, { ready: true }), v('new', 2), other], new Set(['new'])).expiring).toEqual([
      'old',
    ]);
  });
});
