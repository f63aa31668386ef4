import { describe, expect, it } from 'vitest';
import { applyClockSkew, checkTimestamp, formatTimestamp, parseTimestamp } from '../../src/shared/timestamp';

const iso = (v: string) => {
  const ms = parseTimestamp(v);
  return ms === null ? null : formatTimestamp(ms);
};

describe('parseTimestamp: accepted forms', () => {
  it.each([
    ['2015-12-28T23:40:25Z', '2015-12-28T23:40:25.000Z'],
    ['2015-12-28T23:40:25.123Z', '2015-12-28T23:40:25.123Z'],
    // Go v2 client: offset without colon.
    ['2015-12-28T23:40:25-0800', '2015-12-29T07:40:25.000Z'],
    ['2015-12-28T23:40:25+0000', '2015-12-28T23:40:25.000Z'],
    ['2015-12-28T23:40:25+05:30', '2015-12-28T18:10:25.000Z'],
    ['2015-12-28T23:40:25-08:00', '2015-12-29T07:40:25.000Z'],
    ['2015-12-28T23:40:25+05', '2015-12-28T18:40:25.000Z'],
    ['2015-12-28T23:40:25-00:00', '2015-12-28T23:40:25.000Z'],
    // Fractions of any length, truncated (not rounded) to ms.
    ['2015-12-28T23:40:25.123456Z', '2015-12-28T23:40:25.123Z'],
    ['2015-12-28T23:40:25.123456789+01:00', '2015-12-28T22:40:25.123Z'],
    ['2015-12-28T23:40:25.1Z', '2015-12-28T23:40:25.100Z'],
    ['2015-12-28T23:40:25.12Z', '2015-12-28T23:40:25.120Z'],
    ['2015-12-31T23:59:59.9999Z', '2015-12-31T23:59:59.999Z'],
    // RFC 3339 allows a space separator and lower-case t/z.
    ['2015-12-28 23:40:25Z', '2015-12-28T23:40:25.000Z'],
    ['2015-12-28t23:40:25z', '2015-12-28T23:40:25.000Z'],
    ['2016-02-29T00:00:00Z', '2016-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    // Offsets can cross a day, month and year boundary.
    ['2016-01-01T00:30:00+01:00', '2015-12-31T23:30:00.000Z'],
    // Years below 100 are not mapped to 19xx.
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('%s → %s', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  it('returns epoch milliseconds', () => {
    expect(parseTimestamp('1970-01-01T00:00:01.5Z')).toBe(1500);
    expect(parseTimestamp('2015-12-28T23:40:25-0800')).toBe(Date.UTC(2015, 11, 29, 7, 40, 25));
  });
});

describe('parseTimestamp: refused', () => {
  it.each([
    ['not a date', 'is not an ISO 8601'],
    ['', 'is not an ISO 8601'],
    ['2015-13-01T00:00:00Z', 'month out of range'],
    ['2015-00-10T00:00:00Z', 'month out of range'],
    ['2015-02-29T00:00:00Z', 'day out of range'],
    ['1900-02-29T00:00:00Z', 'day out of range'],
    ['2015-04-31T00:00:00Z', 'day out of range'],
    ['2015-01-00T00:00:00Z', 'day out of range'],
    ['2015-12-28T24:00:00Z', 'hour out of range'],
    ['2015-12-28T23:60:00Z', 'minute out of range'],
    ['2015-12-31T23:59:60Z', 'second out of range'],
    ['2015-12-28T23:40:25+24:00', 'offset out of range'],
    ['2015-12-28T23:40:25+05:60', 'offset out of range'],
    ['2015-12-28T23:40:25', 'no time zone offset'],
    ['2015-12-28T23:40:25.123', 'no time zone offset'],
    ['2015-12-28', 'is not an ISO 8601'],
    ['2015-12-28T23:40Z', 'is not an ISO 8601'],
    ['2015-12-28T23:40:25.Z', 'is not an ISO 8601'],
    ['2015-12-28T23:40:25,123Z', 'is not an ISO 8601'],
    ['2015-12-28T23:40:25+5:30', 'is not an ISO 8601'],
    ['2015-12-28T23:40:25+05:3', 'is not an ISO 8601'],
    [' 2015-12-28T23:40:25Z', 'is not an ISO 8601'],
    ['2015-12-28T23:40:25Z ', 'is not an ISO 8601'],
    ['2015-12-28T23:40:25ZZ', 'is not an ISO 8601'],
    ['+002015-12-28T23:40:25Z', 'is not an ISO 8601'],
    ['Mon, 28 Dec 2015 23:40:25 GMT', 'is not an ISO 8601'],
    ['0000-01-01T00:00:00+00:01', 'out of range'],
    ['9999-12-31T23:59:59-00:01', 'out of range'],
  ])('%j (%s)', (input, problem) => {
    expect(parseTimestamp(input)).toBeNull();
    const r = checkTimestamp(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toContain(problem);
  });

  it('refuses numbers, because epoch seconds and milliseconds cannot be told apart', () => {
    expect(parseTimestamp(1451374825)).toBeNull();
    expect(parseTimestamp(1451374825000)).toBeNull();
    const r = checkTimestamp(1451374825);
    expect(r.ok === false && r.problem).toMatch(/not a number/);
  });

  it.each([[null], [undefined], [{}], [[]], [true], [new Date(0)]])('refuses the non-string %j', (v) => {
    expect(parseTimestamp(v)).toBeNull();
  });
});

describe('formatTimestamp', () => {
  it('is UTC with milliseconds and Z', () => {
    expect(formatTimestamp(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(formatTimestamp(Date.UTC(2015, 11, 29, 7, 40, 25, 7))).toBe('2015-12-29T07:40:25.007Z');
  });
  it('round-trips through parseTimestamp', () => {
    const ms = 1_700_000_000_123;
    expect(parseTimestamp(formatTimestamp(ms))).toBe(ms);
  });
  it('throws on NaN rather than writing "Invalid Date"', () => {
    expect(() => formatTimestamp(Number.NaN)).toThrow(RangeError);
  });
});

describe('applyClockSkew (SPEC §3)', () => {
  const receivedAt = Date.UTC(2024, 0, 1, 12, 0, 0);

  it('with timestamp and sentAt, replays the client-side gap against receivedAt', () => {
    // The client's clock is 1 h behind; it stamped the event 3 s before sending it.
    const sentAt = receivedAt - 3_600_000;
    const timestamp = sentAt - 3000;
    expect(applyClockSkew({ receivedAt, timestamp, sentAt })).toEqual({
      timestamp: receivedAt - 3000,
      originalTimestamp: timestamp,
    });
  });

  it('a clock running ahead is corrected the same way', () => {
    const sentAt = receivedAt + 10 * 60_000;
    expect(applyClockSkew({ receivedAt, timestamp: sentAt - 250, sentAt }).timestamp).toBe(receivedAt - 250);
  });

  it('with a timestamp but no sentAt, keeps the timestamp', () => {
    const timestamp = Date.UTC(2015, 11, 28);
    expect(applyClockSkew({ receivedAt, timestamp })).toEqual({ timestamp, originalTimestamp: timestamp });
  });

  it('with no timestamp, uses receivedAt and has no originalTimestamp', () => {
    expect(applyClockSkew({ receivedAt })).toEqual({ timestamp: receivedAt });
    expect(applyClockSkew({ receivedAt, sentAt: receivedAt - 5000 })).toEqual({ timestamp: receivedAt });
  });
});

// The collector's timestamp code is integer calendar math (hot path); Date is the reference.
describe('calendar arithmetic agrees with Date over the whole 0000–9999 range', () => {
  const lo = new Date('0000-01-01T00:00:00.000Z').getTime();
  const hi = new Date('9999-12-31T23:59:59.999Z').getTime();
  // A fixed pseudo-random sequence (reproducible), plus the edges and the leap-day neighbourhoods.
  let seed = 42;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const samples = [lo, hi, 0, -1, 1, 951782400000 /* 2000-02-29 */, 4107542400000 /* 2100-03-01 */];
  for (let i = 0; i < 5_000; i++) samples.push(Math.floor(lo + next() * (hi - lo)));

  it('formatTimestamp matches toISOString', () => {
    for (const ms of samples) expect(formatTimestamp(ms)).toBe(new Date(ms).toISOString());
  });

  it('checkTimestamp reads back what toISOString wrote, and agrees with Date on offsets', () => {
    for (const ms of samples) {
      const text = new Date(ms).toISOString();
      expect(parseTimestamp(text)).toBe(ms);
      // The same instant written with a -08:00 offset.
      const local = new Date(ms - 8 * 3600_000).toISOString().replace('Z', '-08:00');
      if (ms - 8 * 3600_000 >= lo) expect(parseTimestamp(local)).toBe(ms);
    }
  });

  it('falls back to Date outside the 4-digit range and still throws on NaN', () => {
    expect(formatTimestamp(hi + 1)).toBe('+010000-01-01T00:00:00.000Z');
    expect(formatTimestamp(lo - 1)).toBe('-000001-12-31T23:59:59.999Z');
    expect(() => formatTimestamp(Number.NaN)).toThrow(RangeError);
  });

  it('a repeated string gives the same answer as a fresh one (one-entry cache)', () => {
    expect(checkTimestamp('2015-12-28T23:40:25Z')).toEqual({ ok: true, ms: 1451346025000 });
    expect(checkTimestamp('2015-12-28T23:40:25Z')).toEqual({ ok: true, ms: 1451346025000 });
    expect(checkTimestamp('2015-13-28T23:40:25Z')).toEqual({ ok: false, problem: 'month out of range' });
    expect(checkTimestamp('2015-13-28T23:40:25Z')).toEqual({ ok: false, problem: 'month out of range' });
  });
});
