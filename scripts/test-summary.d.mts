// Types for test-summary.mjs (a plain script: `npm test` runs it with Node, without a build).

export type Outcome = 'passed' | 'failed' | 'skipped' | 'notRun';

export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
  notRun: number;
  errors: number;
}

/** The parts of Playwright's JSON report that are read. */
export interface PlaywrightTest {
  status?: string;
  expectedStatus?: string;
  annotations?: { type: string; description?: string }[];
  results?: { status: string; error?: { message?: string }; errors?: { message?: string }[] }[];
}
export interface PlaywrightSuite {
  title?: string;
  specs?: { title?: string; file?: string; line?: number; tests?: PlaywrightTest[] }[];
  suites?: PlaywrightSuite[];
}
export interface PlaywrightReport {
  suites?: PlaywrightSuite[];
  errors?: unknown[];
}

/** The parts of Vitest's JSON report that are read. */
export interface VitestReport {
  success?: boolean;
  testResults?: {
    name?: string;
    status: string;
    message?: string;
    assertionResults?: { title?: string; fullName?: string; ancestorTitles?: string[]; status: string; failureMessages?: string[] }[];
  }[];
}

export function classifyPlaywrightTest(test: PlaywrightTest): Outcome;
export function summarizePlaywright(report: PlaywrightReport): Counts;
export function summarizeVitest(report: VitestReport): Counts;
export function vitestNotPassed(report: VitestReport, root?: string): string[];
export function playwrightNotPassed(report: PlaywrightReport): string[];
export function closingLine(counts: { passed: number; failed: number; skipped: number }): string;
