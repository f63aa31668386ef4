import type { Page } from '@playwright/test';

// Every console error and uncaught page error of a test, to fail it on one. A test that provokes
// an error on purpose (a refused request logs "Failed to load resource: … 409") names it in `allow`.

export interface ConsoleGuard {
  errors: string[];
  allow(pattern: RegExp): void;
  /** Errors not allowed, for `expect(guard.unexpected()).toEqual([])`. */
  unexpected(): string[];
}

export function guardConsole(page: Page): ConsoleGuard {
  const errors: string[] = [];
  const allowed: RegExp[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}${msg.location().url ? ` (${msg.location().url})` : ''}`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  return {
    errors,
    allow: (p) => void allowed.push(p),
    unexpected: () => errors.filter((e) => !allowed.some((p) => p.test(e))),
  };
}
