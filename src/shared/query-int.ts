import { z } from 'zod';

const DIGITS = /^\d+$/;

/**
 * A whole number that may arrive as query-string or path text (`limit=50`, `/messages/42`) or, over
 * IPC, as a number. Text must be decimal digits: z.coerce.number read `1e3` as 1000, `0x10` as 16 and
 * ` 5`, `+5`, `5.` as 5, so a mistyped id opened another call. One message per problem: the range is
 * checked before the whole-number rule (a 20-digit id was reported too big twice).
 */
export const intParam = (min: number, max: number) =>
  z.preprocess(
    // Past about 309 digits a number reads as Infinity: the largest finite one stands for it, so it is "too big".
    (v) => (typeof v === 'string' && DIGITS.test(v) ? Math.min(Number(v), Number.MAX_VALUE) : v),
    z
      .number({ error: (iss) => (iss.code !== 'invalid_type' ? undefined : readsAsNumber(iss.input) ? `expected a whole number in decimal digits, got "${String(iss.input)}"` : 'expected a whole number') })
      .min(min, { abort: true })
      .max(max, { abort: true })
      .int({ error: 'expected a whole number' }),
  );

/** Text JavaScript reads as a number though it is not decimal digits (`0x10`, `1e3`, ` 5`): said so, as it is likely meant as one. */
const readsAsNumber = (v: unknown) => typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v));
