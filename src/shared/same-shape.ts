/** True when A and B accept the same values: `same<A, B>(true)` compiles only then. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * Holds a schema's output type to a type still written by hand beside it (issue 43: the schema is to
 * become the only declaration): a drift between the two fails to compile. Does nothing at run time.
 */
export function same<A, B>(ok: Same<A, B>): void {
  void ok;
}
