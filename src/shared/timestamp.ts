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

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Parse with a human reason on failure; the reason is what drop reasons and inline errors show. */
export function checkTimestamp(value: unknown): TimestampCheck {
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
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12) return { ok: false, problem: 'month out of range' };
  if (day < 1 || day > daysInMonth(year, month)) return { ok: false, problem: 'day out of range' };
  if (hour > 23) return { ok: false, problem: 'hour out of range' };
  if (minute > 59) return { ok: false, problem: 'minute out of range' };
  if (second > 59) return { ok: false, problem: 'second out of range' };
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  let offsetMin = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = m[11] ? Number(m[11]) : 0;
    if (oh > 23 || om > 59) return { ok: false, problem: 'time zone offset out of range' };
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to 1900–1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  const epoch = d.getTime() - offsetMin * 60_000;
  if (!(epoch >= MIN_MS && epoch <= MAX_MS)) return { ok: false, problem: 'out of range (years 0000–9999)' };
  return { ok: true, ms: epoch };
}

/** Epoch ms of an accepted timestamp string, or null (see the rules above). */
export function parseTimestamp(value: unknown): number | null {
  const r = checkTimestamp(value);
  return r.ok ? r.ms : null;
}

/** UTC, millisecond precision, `Z` suffix: the one outbound form (SPEC §3). Throws RangeError on NaN. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
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
