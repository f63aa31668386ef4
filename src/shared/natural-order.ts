// Ids people read in a list (audience members: user_2 before user_10): digits compare as numbers,
// the rest as text. Intl's numeric collation is the well-kept rule for it (ICU's); one collator is
// made once, as MDN advises for sorting many strings.
const collator = new Intl.Collator('en', { numeric: true });

/** For Array.prototype.sort: `u2` < `u10` < `U11`; equal under the collation, by code units so the order is total. */
export function naturalOrder(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}
