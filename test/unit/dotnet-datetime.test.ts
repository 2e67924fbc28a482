// SPEC §14 PV-2: the .NET invariant-culture date/time formatter against every sourced vector of
// the shared research note (copied into fixtures/ so a fresh clone is self-contained).
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatDotNetDateTime, instantFromDate, type UtcInstant } from '../../domain/dotnet-datetime';

interface Vector {
  id: string;
  instant: string;
  ticksOfSecond: number;
  format: string;
  expected: string | null;
  throws: 'FormatException' | null;
}

const { vectors } = JSON.parse(
  readFileSync(join(__dirname, 'fixtures', 'dotnet-datetime-vectors.json'), 'utf8'),
) as { vectors: Vector[] };

/** The vector's instant at 100-ns precision: whole seconds from the ISO text, fraction from ticks. */
function instantOf(v: Vector): UtcInstant {
  const secondsMs = Date.parse(`${v.instant.slice(0, 19)}Z`);
  return {
    epochMs: secondsMs + Math.floor(v.ticksOfSecond / 10_000),
    subMillisecondTicks: v.ticksOfSecond % 10_000,
  };
}

describe('PV-2 formatDotNetDateTime: sourced vectors', () => {
  it('PV-2: the fixture holds all 176 vectors, 13 of them FormatExceptions', () => {
    expect(vectors).toHaveLength(176);
    expect(new Set(vectors.map((v) => v.id)).size).toBe(176);
    expect(vectors.filter((v) => v.throws === 'FormatException')).toHaveLength(13);
  });

  it('PV-2: the vectors’ instants parse to their stated calendar fields', () => {
    for (const v of vectors) {
      const instant = instantOf(v);
      expect(formatDotNetDateTime(instant, 'yyyy-MM-ddTHH:mm:ss')).toBe(v.instant.slice(0, 19));
    }
  });

  it.each(vectors.map((v) => [v.id, JSON.stringify(v.format), v] as const))(
    'PV-2 %s: format %s',
    (_id, _format, v) => {
      const got = formatDotNetDateTime(instantOf(v), v.format);
      if (v.throws === 'FormatException') expect(got).toBeUndefined();
      else expect(got).toBe(v.expected);
    },
  );
});

describe('PV-2 formatDotNetDateTime: API', () => {
  const a: UtcInstant = { epochMs: Date.parse('2009-06-15T13:45:30.617Z'), subMillisecondTicks: 1234 };

  it('PV-2: no format and an empty format are "G"', () => {
    expect(formatDotNetDateTime(a)).toBe('06/15/2009 13:45:30');
    expect(formatDotNetDateTime(a, '')).toBe('06/15/2009 13:45:30');
  });

  it('PV-2: sub-millisecond ticks reach f and F', () => {
    expect(formatDotNetDateTime(a, 'fffffff')).toBe('6171234');
    expect(formatDotNetDateTime(a, 'o')).toBe('2009-06-15T13:45:30.6171234Z');
    expect(formatDotNetDateTime({ epochMs: a.epochMs, subMillisecondTicks: 0 }, 'FFFFFFF')).toBe('617');
  });

  it('PV-2: instantFromDate keeps the Date’s milliseconds', () => {
    const instant = instantFromDate(new Date('2026-11-29T12:00:00.050Z'));
    expect(formatDotNetDateTime(instant, 'o')).toBe('2026-11-29T12:00:00.0500000Z');
  });

  it('PV-2: years 1 and 9999 are the edges; outside them there is no DateTime', () => {
    expect(formatDotNetDateTime({ epochMs: -62_135_596_800_000 }, 'o')).toBe('0001-01-01T00:00:00.0000000Z');
    expect(formatDotNetDateTime({ epochMs: 253_402_300_799_999, subMillisecondTicks: 9999 }, 'o')).toBe(
      '9999-12-31T23:59:59.9999999Z',
    );
    expect(() => formatDotNetDateTime({ epochMs: -62_135_596_800_001 })).toThrow(RangeError);
    expect(() => formatDotNetDateTime({ epochMs: 253_402_300_800_000 })).toThrow(RangeError);
    expect(() => formatDotNetDateTime({ epochMs: 1.5 })).toThrow(RangeError);
    expect(() => formatDotNetDateTime({ epochMs: 0, subMillisecondTicks: 10_000 })).toThrow(RangeError);
  });

  it('PV-2: % formats one specifier into the same output, so the F dot rule still sees it', () => {
    const noon = { epochMs: Date.parse('2026-11-29T12:00:00.000Z') };
    expect(formatDotNetDateTime(noon, 'ss.%F')).toBe('00');
    expect(formatDotNetDateTime(noon, "%'")).toBeUndefined(); // the lone quote is unterminated
    expect(formatDotNetDateTime(noon, 'KK')).toBe('ZZ');
  });

  it('PV-2: any format either formats or is rejected, and never throws', () => {
    const instants = fc.record({
      epochMs: fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }),
      subMillisecondTicks: fc.integer({ min: 0, max: 9999 }),
    });
    fc.assert(
      fc.property(instants, fc.string({ maxLength: 40 }), (instant, format) => {
        const got = formatDotNetDateTime(instant, format);
        expect(got === undefined || typeof got === 'string').toBe(true);
      }),
    );
  });

  it('PV-2: text without reserved characters is copied as is (multi-character formats)', () => {
    const literal = fc
      .string({ minLength: 2, maxLength: 30 })
      .filter((s) => !/[FHKMdfghmstyz%:/"'\\]/.test(s));
    fc.assert(fc.property(literal, (format) => expect(formatDotNetDateTime(a, format)).toBe(format)));
  });
});
