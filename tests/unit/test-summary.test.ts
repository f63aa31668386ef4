import { describe, expect, it } from 'vitest';
import { classifyPlaywrightTest, closingLine, playwrightNotPassed, summarizePlaywright, summarizeVitest, vitestNotPassed } from '../../scripts/test-summary.mjs';

// scripts/test.mjs's closing line: a test that did not run is never counted as skipped. The reports
// below have the shapes Playwright 1.65 and Vitest 4.1 wrote for these cases (checked by running them).

const serial = { type: 'serial' };
const playwrightReport = {
  errors: [],
  suites: [
    {
      title: 'a.spec.ts',
      specs: [
        { title: 'runtime skip', tests: [{ status: 'skipped', expectedStatus: 'skipped', annotations: [{ type: 'skip', description: 'at run time' }], results: [{ status: 'skipped' }] }] },
        { title: 'fixme', tests: [{ status: 'skipped', expectedStatus: 'skipped', annotations: [{ type: 'fixme' }], results: [{ status: 'skipped' }] }] },
      ],
      suites: [
        {
          title: 'serial',
          specs: [
            { title: 'passes', tests: [{ status: 'expected', expectedStatus: 'passed', annotations: [serial], results: [{ status: 'passed' }] }] },
            { title: 'fails', tests: [{ status: 'unexpected', expectedStatus: 'passed', annotations: [serial], results: [{ status: 'failed' }] }] },
            // After a failure in a serial suite: "did not run", which the report's stats count as skipped.
            { title: 'did not run', tests: [{ status: 'skipped', expectedStatus: 'passed', annotations: [serial], results: [{ status: 'skipped' }] }] },
          ],
        },
        {
          title: 'desktop',
          specs: [{ title: 'skipped with a reason', tests: [{ status: 'skipped', expectedStatus: 'skipped', annotations: [{ type: 'skip', description: 'no display' }], results: [{ status: 'skipped' }] }] }],
        },
      ],
    },
  ],
};

describe('Playwright report', () => {
  it('a test that did not run counts as not run, a chosen skip as skipped', () => {
    expect(summarizePlaywright(playwrightReport)).toEqual({ passed: 1, failed: 1, skipped: 3, notRun: 1, errors: 0 });
  });

  it('no result, an interrupted one, or an unknown status is not run', () => {
    expect(classifyPlaywrightTest({ status: 'skipped', expectedStatus: 'passed', results: [] })).toBe('notRun');
    expect(classifyPlaywrightTest({ status: 'skipped', expectedStatus: 'skipped', results: [] })).toBe('notRun');
    expect(classifyPlaywrightTest({ status: 'skipped', expectedStatus: 'passed', results: [{ status: 'interrupted' }] })).toBe('notRun');
    expect(classifyPlaywrightTest({ status: 'something new', expectedStatus: 'passed', results: [{ status: 'passed' }] })).toBe('notRun');
    expect(classifyPlaywrightTest({ status: 'flaky', expectedStatus: 'passed', results: [{ status: 'failed' }, { status: 'passed' }] })).toBe('passed');
  });

  it('errors outside tests (global setup, a file that does not load) are counted', () => {
    expect(summarizePlaywright({ errors: [{ message: 'globalSetup threw' }], suites: [] })).toEqual({ passed: 0, failed: 0, skipped: 0, notRun: 0, errors: 1 });
  });
});

describe('Vitest report', () => {
  const report = {
    success: false,
    testResults: [
      {
        name: 'hook.test.ts',
        status: 'failed',
        // beforeAll threw: Vitest marks the suite's tests skipped, like it.skip, but the file failed.
        assertionResults: [
          { title: 'never runs 1', status: 'skipped' },
          { title: 'never runs 2', status: 'skipped' },
          { title: 'passes', status: 'passed' },
        ],
      },
      { name: 'ok.test.ts', status: 'passed', assertionResults: [{ title: 'passes', status: 'passed' }, { title: 'later', status: 'todo' }, { title: 'skip', status: 'skipped' }] },
      { name: 'broken-import.test.ts', status: 'failed', assertionResults: [] },
      { name: 'fails.test.ts', status: 'failed', assertionResults: [{ title: 'fails', status: 'failed' }] },
    ],
  };

  it('skipped tests of a failed file did not run; a failed file with no failed test is an error', () => {
    expect(summarizeVitest(report)).toEqual({ passed: 2, failed: 1, skipped: 2, notRun: 2, errors: 1 });
  });

  it('an unsuccessful run with nothing failed in it still fails', () => {
    expect(summarizeVitest({ success: false, testResults: [{ status: 'passed', assertionResults: [{ status: 'passed' }] }] }).errors).toBe(1);
    expect(summarizeVitest({ success: true, testResults: [{ status: 'passed', assertionResults: [{ status: 'passed' }] }] }).errors).toBe(0);
  });
});

// A CI log is read from its tail: what did not pass is named there, not only counted.
describe('what did not pass, named', () => {
  it('Vitest: each failed test with the first line of its message, tests that did not run, files failed outside their tests', () => {
    const report = {
      success: false,
      testResults: [
        {
          name: '/repo/tests/a.test.ts',
          status: 'failed',
          assertionResults: [
            // As Vitest 4 writes them: fullName joins the titles with spaces, the message may carry colours.
            { title: 'waits', fullName: 'queue waits', ancestorTitles: ['queue'], status: 'failed', failureMessages: ['\nAssertionError: expected \u001b[32m2\u001b[39m to be 3\n    at x.ts:1'] },
            { title: 'passes', status: 'passed' },
            { title: 'after the hook', ancestorTitles: ['queue'], status: 'skipped' },
          ],
        },
        { name: '/repo/tests/b.test.ts', status: 'failed', message: 'Cannot find module x', assertionResults: [] },
        { name: '/repo/tests/c.test.ts', status: 'passed', assertionResults: [{ title: 'chosen skip', status: 'skipped' }] },
      ],
    };
    expect(vitestNotPassed(report, '/repo')).toEqual([
      'tests/a.test.ts › queue › waits: AssertionError: expected 2 to be 3',
      'tests/a.test.ts › queue › after the hook: did not run',
      'tests/b.test.ts: Cannot find module x',
    ]);
    expect(vitestNotPassed({ testResults: [{ name: 'x', status: 'failed', assertionResults: [{ title: 't', status: 'failed', failureMessages: ['y'.repeat(500)] }] }] })[0]).toHaveLength('x › t: '.length + 241);
    // Windows: the report's paths and the root in either slash.
    expect(vitestNotPassed({ testResults: [{ name: 'C:/repo/tests/a.test.ts', status: 'failed', message: 'boom', assertionResults: [] }] }, 'C:\\repo')).toEqual(['tests/a.test.ts: boom']);
    // A failed run with nothing failed in it (no test files) is named too, as it is counted.
    expect(vitestNotPassed({ success: false, testResults: [] })).toEqual(['the run failed outside any test file (see its output above)']);
  });

  it('Playwright: failed and not-run tests with file and line, errors outside tests; chosen skips are not listed', () => {
    const report = {
      errors: [{ message: 'global setup failed\nstack' }],
      suites: [
        {
          title: 'a.spec.ts',
          specs: [
            { title: 'fails', file: 'a.spec.ts', line: 7, tests: [{ status: 'unexpected', expectedStatus: 'passed', results: [{ status: 'failed', error: { message: '\u001b[31mTimed out\u001b[39m 5000ms\nmore' }, errors: [{ message: 'Timed out 5000ms\nmore' }] }] }] },
            { title: 'chosen', file: 'a.spec.ts', line: 9, tests: [{ status: 'skipped', expectedStatus: 'skipped', results: [{ status: 'skipped' }] }] },
            { title: 'never ran', file: 'a.spec.ts', line: 11, tests: [{ status: 'skipped', expectedStatus: 'passed', results: [] }] },
          ],
        },
      ],
    };
    expect(playwrightNotPassed(report)).toEqual(['a.spec.ts:7 › fails: Timed out 5000ms', 'a.spec.ts:11 › never ran: did not run', 'outside any test: global setup failed']);
    expect(playwrightNotPassed(playwrightReport)).toEqual(['a.spec.ts › serial › fails: ', 'a.spec.ts › serial › did not run: did not run']);
  });
});

it('the closing line keeps the format the CI reader expects', () => {
  expect(closingLine({ passed: 12, failed: 3, skipped: 1 })).toBe('12 passed, 3 failed, 1 skipped');
});
