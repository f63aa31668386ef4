/** Anything with a `log(line)` method; `console` qualifies. */
export interface Logger {
  log(line: string): void;
}

/** Debug logging is on when DEBUG names `analytics` (as in `DEBUG=analytics` or `DEBUG=app,analytics:*`) or is `*`. */
export function debugEnabled(env: Record<string, string | undefined>): boolean {
  const value = env.DEBUG ?? '';
  return value.includes('analytics') || value.split(/[\s,]+/).includes('*');
}

/** Debug lines go to stderr, like the `debug` package, so they never mix into a program's stdout. */
export const stderrLogger: Logger = {
  log: (line) => console.error(line),
};
