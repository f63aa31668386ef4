/**
 * A load (a lazy import, and what is made from it) begun by the first caller and shared by the rest.
 * A failed load is forgotten, so the next caller tries again rather than inheriting the failure.
 */
export interface LoadOnce<T> {
  get(): Promise<T>;
  /** The load begun, if any, without beginning one: to tidy up what it made. */
  peek(): Promise<T> | undefined;
}

export function loadOnce<T>(load: () => Promise<T>): LoadOnce<T> {
  let pending: Promise<T> | undefined;
  return {
    get: () =>
      (pending ??= load().catch((err: unknown) => {
        pending = undefined;
        throw err;
      })),
    peek: () => pending,
  };
}
