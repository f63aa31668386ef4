import { describe, expect, it } from 'vitest';
import { countOf, formatTime } from '../../src/renderer/components/format';

describe('formatTime', () => {
  it('shows local time as 24-hour HH:MM:SS.mmm, zero-padded', () => {
    expect(formatTime(new Date(2026, 0, 2, 3, 4, 5, 6).toISOString())).toBe('03:04:05.006');
    expect(formatTime(new Date(2026, 6, 31, 23, 59, 58, 120).toISOString())).toBe('23:59:58.120');
    expect(formatTime(new Date(2026, 6, 31, 0, 0, 0, 0).toISOString())).toBe('00:00:00.000');
  });

  it('passes through what is not a time', () => {
    expect(formatTime(null)).toBe('—');
    expect(formatTime('')).toBe('—');
    expect(formatTime('not a date')).toBe('not a date');
  });
});

describe('countOf', () => {
  it('one is singular ("1 rules" read in the plans screen); others plural, with thousands separated', () => {
    expect([countOf(1, 'rule'), countOf(0, 'rule'), countOf(2000, 'attempt')]).toEqual(['1 rule', '0 rules', '2,000 attempts']);
  });
});
