// SPEC §14 PV-2: .NET `DateTime.ToString(format, CultureInfo.InvariantCulture)` for a DateTime of
// Kind Utc on a server whose offset is +00:00 (.NET Core / .NET 5+ semantics). Pure.
//
// Written by hand after the npm candidates failed the vectors (decisions.md). It follows the
// runtime's `DateTimeFormat.FormatCustomized` one format character at a time, so the odd corners
// behave as .NET does: a one-character format is a standard specifier or a FormatException; `F`
// digits that are all zero write nothing and delete a `.` that ends the output so far (even a
// quoted one); `%x` formats x alone into the same output; `\` escapes inside quotes too; extra
// repeats of h/H/m/s/t/z/g/d/M keep the widest form. The test vectors, all sourced, are in
// test/unit/fixtures/dotnet-datetime-vectors.json.

/**
 * A UTC instant at .NET precision (100-ns ticks), years 1..9999. `epochMs` is what
 * `Date.getTime()` returns (an integer, negative before 1970); `subMillisecondTicks` (0..9999,
 * default 0) carries the ticks a JS Date cannot hold. JSON-safe, so it may cross Temporal payloads.
 */
export interface UtcInstant {
  epochMs: number;
  subMillisecondTicks?: number;
}

/** The instant of a JS Date (millisecond precision). */
export const instantFromDate = (date: Date): UtcInstant => ({ epochMs: date.getTime() });

const MIN_EPOCH_MS = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
const MAX_EPOCH_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
const TICKS_PER_MS = 10_000;
const MAX_FRACTION_DIGITS = 7;

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const abbreviation = (name: string) => name.slice(0, 3); // invariant abbreviations are the first 3 letters
const ERA_NAME = 'A.D.';

// Invariant-culture patterns of the standard specifiers (the runtime's fast paths for o, r, s and
// u write exactly these patterns' output).
const ROUNDTRIP = "yyyy'-'MM'-'dd'T'HH':'mm':'ss.fffffffK";
const RFC1123 = "ddd, dd MMM yyyy HH':'mm':'ss 'GMT'";
const FULL_DATE_TIME = 'dddd, dd MMMM yyyy HH:mm:ss';
const GENERAL_LONG = 'MM/dd/yyyy HH:mm:ss';
const STANDARD_PATTERNS = new Map<string, string>([
  ['d', 'MM/dd/yyyy'],
  ['D', 'dddd, dd MMMM yyyy'],
  ['f', 'dddd, dd MMMM yyyy HH:mm'],
  ['F', FULL_DATE_TIME],
  ['g', 'MM/dd/yyyy HH:mm'],
  ['G', GENERAL_LONG],
  ['m', 'MMMM dd'],
  ['M', 'MMMM dd'],
  ['o', ROUNDTRIP],
  ['O', ROUNDTRIP],
  ['r', RFC1123],
  ['R', RFC1123],
  ['s', "yyyy'-'MM'-'dd'T'HH':'mm':'ss"],
  ['t', 'HH:mm'],
  ['T', 'HH:mm:ss'],
  ['u', "yyyy'-'MM'-'dd HH':'mm':'ss'Z'"],
  ['U', FULL_DATE_TIME], // after ToUniversalTime(), a no-op for Kind Utc
  ['y', 'yyyy MMMM'],
  ['Y', 'yyyy MMMM'],
]);

interface Fields {
  year: number;
  month: number; // 1..12
  day: number;
  dayOfWeek: number; // 0 = Sunday
  hour: number;
  minute: number;
  second: number;
  fractionTicks: number; // 0..9_999_999
}

function fieldsOf(instant: UtcInstant): Fields {
  const { epochMs, subMillisecondTicks = 0 } = instant;
  if (!Number.isInteger(epochMs) || epochMs < MIN_EPOCH_MS || epochMs > MAX_EPOCH_MS)
    throw new RangeError(`epochMs must be an integer between year 1 and year 9999 (got ${epochMs})`);
  if (
    !Number.isInteger(subMillisecondTicks) ||
    subMillisecondTicks < 0 ||
    subMillisecondTicks >= TICKS_PER_MS
  )
    throw new RangeError(
      `subMillisecondTicks must be an integer from 0 to 9999 (got ${subMillisecondTicks})`,
    );
  const d = new Date(epochMs);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    dayOfWeek: d.getUTCDay(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    fractionTicks: d.getUTCMilliseconds() * TICKS_PER_MS + subMillisecondTicks,
  };
}

/** What .NET reports as a FormatException; never leaves this module. */
class FormatError extends Error {}

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/** How many times the character at `at` repeats from there. */
function runLength(format: string, at: number): number {
  let end = at + 1;
  while (format[end] === format[at]) end++;
  return end - at;
}

/** `'…'` or `"…"` at `at`: the copied text and the characters consumed (quotes included). */
function quoted(format: string, at: number): { text: string; length: number } {
  const quote = format[at];
  let text = '';
  for (let i = at + 1; i < format.length; i++) {
    const ch = format[i];
    if (ch === quote) return { text, length: i - at + 1 };
    if (ch === '\\') {
      i++;
      if (i >= format.length) break;
      text += format[i];
    } else text += ch;
  }
  throw new FormatError('unterminated quoted string');
}

/** `F…`: up to n fraction digits without trailing zeros; none at all also drops a trailing `.`. */
function appendTrimmedFraction(out: string, digits: number, width: number): string {
  while (width > 0 && digits % 10 === 0) {
    digits /= 10;
    width--;
  }
  if (width > 0) return out + pad(digits, width);
  return out.endsWith('.') ? out.slice(0, -1) : out;
}

/** Appends `format` (a custom format string) for `t` to `out`. */
function appendCustom(t: Fields, format: string, out: string): string {
  let i = 0;
  while (i < format.length) {
    const ch = format[i];
    let length = 1;
    switch (ch) {
      case 'g':
        length = runLength(format, i);
        out += ERA_NAME;
        break;
      case 'h':
        length = runLength(format, i);
        out += pad(t.hour % 12 || 12, Math.min(length, 2));
        break;
      case 'H':
      case 'm':
      case 's': {
        length = runLength(format, i);
        const value = ch === 'H' ? t.hour : ch === 'm' ? t.minute : t.second;
        out += pad(value, Math.min(length, 2));
        break;
      }
      case 'f':
      case 'F': {
        length = runLength(format, i);
        if (length > MAX_FRACTION_DIGITS) throw new FormatError('more than 7 fraction digits');
        const digits = Math.floor(t.fractionTicks / 10 ** (MAX_FRACTION_DIGITS - length));
        out = ch === 'f' ? out + pad(digits, length) : appendTrimmedFraction(out, digits, length);
        break;
      }
      case 't': {
        length = runLength(format, i);
        const designator = t.hour < 12 ? 'AM' : 'PM';
        out += length === 1 ? designator[0] : designator;
        break;
      }
      case 'd': {
        length = runLength(format, i);
        const name = DAY_NAMES[t.dayOfWeek]!;
        out += length <= 2 ? pad(t.day, length) : length === 3 ? abbreviation(name) : name;
        break;
      }
      case 'M': {
        length = runLength(format, i);
        const name = MONTH_NAMES[t.month - 1]!;
        out += length <= 2 ? pad(t.month, length) : length === 3 ? abbreviation(name) : name;
        break;
      }
      case 'y':
        length = runLength(format, i);
        out += length <= 2 ? pad(t.year % 100, length) : pad(t.year, length);
        break;
      case 'z': // Kind Utc: the offset is zero whatever the machine's zone is
        length = runLength(format, i);
        out += length === 1 ? '+0' : length === 2 ? '+00' : '+00:00';
        break;
      case 'K': // Kind Utc
        out += 'Z';
        break;
      case ':': // invariant TimeSeparator
      case '/': // invariant DateSeparator
        out += ch;
        break;
      case "'":
      case '"': {
        const literal = quoted(format, i);
        out += literal.text;
        length = literal.length;
        break;
      }
      case '%': {
        const next = format[i + 1];
        if (next === undefined || next === '%') throw new FormatError('invalid % specifier');
        out = appendCustom(t, next, out);
        length = 2;
        break;
      }
      case '\\': {
        const next = format[i + 1];
        if (next === undefined) throw new FormatError('trailing backslash');
        out += next;
        length = 2;
        break;
      }
      default:
        out += ch;
    }
    i += length;
  }
  return out;
}

/**
 * `instant` formatted as .NET's `DateTime.ToString(format, CultureInfo.InvariantCulture)` does for
 * a Kind-Utc DateTime; an empty or missing format is "G" (`MM/dd/yyyy HH:mm:ss`). Returns
 * undefined where .NET throws a FormatException. Throws RangeError for an instant outside years
 * 1..9999 (no DateTime exists there).
 */
export function formatDotNetDateTime(instant: UtcInstant, format?: string): string | undefined {
  const fields = fieldsOf(instant);
  let pattern = format === undefined || format === '' ? GENERAL_LONG : format;
  if (pattern.length === 1) {
    const standard = STANDARD_PATTERNS.get(pattern);
    if (standard === undefined) return undefined;
    pattern = standard;
  }
  try {
    return appendCustom(fields, pattern, '');
  } catch (error) {
    if (error instanceof FormatError) return undefined;
    throw error;
  }
}
