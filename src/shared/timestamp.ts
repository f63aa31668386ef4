// Timestamps on the wire (SPEC §3). Pure: shared by the collector, the client and the UI.
//
// Accepted (decisions, stated in the README):
// - Strings only: `YYYY-MM-DDThh:mm:ss[.fraction]<offset>`, with `T`, `t` or one space between date
//   and time (RFC 3339 §5.6 allows the space). Seconds are required (RFC 3339 has no minute form).
// - Fraction: any number of digits, truncated to milliseconds (`.123456` → 123 ms, `.9999` → 999 ms),
//   never rounded, so a value cannot roll over into the next second.
// - Offset is required: `Z`/`z`, `+hh:mm`, `+hhmm` (the Go v2 client sends `-0800`), or `+hh`.
//   Without one the instant is ambiguous (whose local time?), so it is refused rather than guessed.
// - Field ranges are checked: month 01–12, day within the month (leap years), hour 00–23,
//   minute/second 00–59 (no leap second 60, no 24:00), offset hours 00–23 and minutes 00–59.
// - Numbers are refused: a bare number is ambiguous between epoch seconds and milliseconds
//   (1451374825 read as ms is January 1970), and every official client sends ISO strings.
// - The instant must fall within years 0000–9999 UTC so it always formats back to a 4-digit year.

export type TimestampCheck = { ok: true; ms: number } | { ok: false; problem: string };

const PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

const MIN_MS = -62167219200000; // 0000-01-01T00:00:00.000Z
const MAX_MS = 253402300799999; // 9999-12-31T23:59:59.999Z
const DAY_MS = 86_400_000;

// Calendar arithmetic on the proleptic Gregorian calendar (what Date uses), after Howard Hinnant's
// days_from_civil / civil_from_days. The collector parses and formats several timestamps per event;
// doing it with integer math instead of Date objects and toISOString is several times cheaper.
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// One entry: every item of a batch is checked against the envelope's sentAt.
let lastChecked: string | undefined;
let lastCheck: TimestampCheck = { ok: false, problem: '' };

/** Parse with a human reason on failure; the reason is what drop reasons and inline errors show. */
export function checkTimestamp(value: unknown): TimestampCheck {
  if (value === lastChecked) return lastCheck;
  const r = check(value);
  if (typeof value === 'string') {
    lastChecked = value;
    lastCheck = r;
  }
  return r;
}

function check(value: unknown): TimestampCheck {
  if (typeof value === 'number') {
    return { ok: false, problem: 'must be an ISO 8601 string, not a number (epoch seconds or milliseconds is ambiguous)' };
  }
  if (typeof value !== 'string') return { ok: false, problem: 'must be an ISO 8601 string' };
  const m = PATTERN.exec(value);
  if (!m) {
    if (/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(value)) {
      return { ok: false, problem: 'has no time zone offset (add Z or +hh:mm)' };
    }
    return { ok: false, problem: 'is not an ISO 8601 date-time like 2015-12-28T23:40:25.000Z' };
  }
  const year = +m[1];
  const month = +m[2];
  const day = +m[3];
  const hour = +m[4];
  const minute = +m[5];
  const second = +m[6];
  if (month < 1 || month > 12) return { ok: false, problem: 'month out of range' };
  if (day < 1 || day > daysInMonth(year, month)) return { ok: false, problem: 'day out of range' };
  if (hour > 23) return { ok: false, problem: 'hour out of range' };
  if (minute > 59) return { ok: false, problem: 'minute out of range' };
  if (second > 59) return { ok: false, problem: 'second out of range' };
  const fraction = m[7];
  // Truncated to milliseconds, never rounded.
  const ms = fraction === undefined ? 0 : fraction.length >= 3 ? +fraction.slice(0, 3) : +fraction.padEnd(3, '0');
  let offsetMin = 0;
  if (m[8] === undefined) {
    const oh = +m[10];
    const om = m[11] !== undefined ? +m[11] : 0;
    if (oh > 23 || om > 59) return { ok: false, problem: 'time zone offset out of range' };
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const epoch = daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute - offsetMin) * 60 + second) * 1000 + ms;
  if (!(epoch >= MIN_MS && epoch <= MAX_MS)) return { ok: false, problem: 'out of range (years 0000–9999)' };
  return { ok: true, ms: epoch };
}

/** Epoch ms of an accepted timestamp string, or null (see the rules above). */
export function parseTimestamp(value: unknown): number | null {
  const r = checkTimestamp(value);
  return r.ok ? r.ms : null;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);
// A few recent results: a batch's items share its arrival time and often their sentAt, while each
// item's own timestamp is formatted in between.
const RECENT = 4;
const recentMs: number[] = new Array<number>(RECENT).fill(Number.NaN);
const recentText: string[] = new Array<string>(RECENT).fill('');
let nextSlot = 0;

/**
 * UTC, millisecond precision, `Z` suffix: the one form every time the app shows or sends is written in
 * (SPEC §3), the same text as Date#toISOString. Throws RangeError on NaN.
 */
export function formatTimestamp(ms: number): string {
  for (let i = 0; i < RECENT; i++) if (recentMs[i] === ms) return recentText[i];
  // Outside 0000–9999 (and NaN, which must throw) Date has the rules for extended years.
  if (!(ms >= MIN_MS && ms <= MAX_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const milli = rest % 1000;
  rest = (rest - milli) / 1000;
  const second = rest % 60;
  rest = (rest - second) / 60;
  const minute = rest % 60;
  const hour = (rest - minute) / 60;
  const y = year < 10 ? `000${year}` : year < 100 ? `00${year}` : year < 1000 ? `0${year}` : `${year}`;
  const text = `${y}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}.${pad3(milli)}Z`;
  recentMs[nextSlot] = ms;
  recentText[nextSlot] = text;
  nextSlot = (nextSlot + 1) % RECENT;
  return text;
}

/** formatTimestamp for a time that may be absent (a delivery not yet attempted, a call never synced). */
export function formatOptionalTimestamp(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : formatTimestamp(ms);
}

export interface SkewInput {
  receivedAt: number;
  timestamp?: number;
  sentAt?: number;
}

/**
 * Clock-skew correction (SPEC §3, real): the client's clock may be off, but the gap between when it
 * stamped the event and when it sent it is trustworthy, so that gap is replayed against the server's
 * arrival time. Without sentAt there is no gap to measure and the client's timestamp is kept.
 */
export function applyClockSkew({ receivedAt, timestamp, sentAt }: SkewInput): { timestamp: number; originalTimestamp?: number } {
  if (timestamp === undefined) return { timestamp: receivedAt };
  if (sentAt === undefined) return { timestamp, originalTimestamp: timestamp };
  return { timestamp: receivedAt - (sentAt - timestamp), originalTimestamp: timestamp };
}
