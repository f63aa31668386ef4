// How scripts/test.mjs reads the two runners' JSON reports into `N passed, N failed, N skipped`.
// Pure functions over the parsed reports, so the rules are tested (tests/unit/test-summary.test.ts).
//
// The rule both share: "skipped" is only a test someone chose to skip. A test that should have run
// and did not (the serial suite stopped at an earlier failure, a hook failed, the run was
// interrupted) is "not run", and not run counts as failed: a failure is never hidden as a skip.

/**
 * One Playwright test (a `tests[]` entry of a spec in the JSON reporter's output).
 * Playwright itself reports a did-not-run test with status 'skipped' and counts it in
 * `stats.skipped`; it tells the two apart the same way as here (its list reporter's "did not run"):
 * a real skip (`test.skip()`, `test.fixme()`) sets expectedStatus to 'skipped' and has a result
 * that says skipped; a test that never ran has no result, or a skipped one while it expected to pass.
 * @returns {'passed' | 'failed' | 'skipped' | 'notRun'}
 */
export function classifyPlaywrightTest(test) {
  const results = test.results ?? [];
  if (test.status === 'expected' || test.status === 'flaky') return 'passed';
  if (test.status === 'unexpected') return 'failed';
  if (test.status === 'skipped' && test.expectedStatus === 'skipped' && results.length > 0 && results.every((r) => r.status === 'skipped')) {
    return 'skipped';
  }
  return 'notRun';
}

/** Counts over a whole Playwright JSON report; `errors` are failures outside any test (global setup, a file that does not load). */
export function summarizePlaywright(report) {
  const counts = { passed: 0, failed: 0, skipped: 0, notRun: 0, errors: (report.errors ?? []).length };
  const walk = (suite) => {
    for (const spec of suite.specs ?? []) for (const test of spec.tests ?? []) counts[classifyPlaywrightTest(test)]++;
    for (const child of suite.suites ?? []) walk(child);
  };
  for (const suite of report.suites ?? []) walk(suite);
  return counts;
}

/**
 * Counts over a Vitest JSON report. Vitest marks the tests of a suite whose hook failed as skipped,
 * the same as `it.skip`, but the file then has status 'failed': there, a test that did not pass or
 * fail did not run. A failed file with no such test failed outside its tests (an import error, an
 * afterAll): one error.
 */
export function summarizeVitest(report) {
  const counts = { passed: 0, failed: 0, skipped: 0, notRun: 0, errors: 0 };
  for (const file of report.testResults ?? []) {
    const fileFailed = file.status === 'failed';
    let notGood = 0;
    for (const t of file.assertionResults ?? []) {
      if (t.status === 'passed') counts.passed++;
      else if (t.status === 'failed') {
        counts.failed++;
        notGood++;
      } else if (!fileFailed && (t.status === 'skipped' || t.status === 'todo')) counts.skipped++;
      else {
        // 'pending' means still running when the report was written, or skipped by a failed hook.
        counts.notRun++;
        notGood++;
      }
    }
    if (fileFailed && notGood === 0) counts.errors++;
  }
  if (report.success === false && counts.failed + counts.notRun + counts.errors === 0) counts.errors++;
  return counts;
}

/** The first line of a failure's message, without terminal colours, cut to keep the list short. */
function firstLine(text) {
  const plain = String(text ?? '').replace(/\u001b\[[0-9;]*m/g, '');
  const line = (plain.split('\n').find((l) => l.trim() !== '') ?? '').trim();
  return line.length > 240 ? `${line.slice(0, 240)}…` : line;
}
/** A report's file path from the project's root, with `/` (Vitest writes `/` on Windows too). */
function relative(root, file) {
  if (!file) return '?';
  const f = file.replace(/\\/g, '/');
  const r = (root ?? '').replace(/\\/g, '/');
  return r && f.startsWith(r + '/') ? f.slice(r.length + 1) : f;
}

/**
 * One line per Vitest test that did not pass (failed, or did not run in a failed file), and per file
 * that failed outside its tests: `file › test: first line of the message`. Printed just above the
 * closing line, so the last lines of a CI log name what failed.
 */
export function vitestNotPassed(report, root = '') {
  const lines = [];
  for (const file of report.testResults ?? []) {
    const fileFailed = file.status === 'failed';
    const name = relative(root, file.name);
    let named = 0;
    for (const t of file.assertionResults ?? []) {
      // Not fullName: Vitest joins the titles with spaces there.
      const title = [...(t.ancestorTitles ?? []), t.title ?? t.fullName ?? '?'].join(' › ');
      if (t.status === 'failed') lines.push(`${name} › ${title}: ${firstLine(t.failureMessages?.[0])}`);
      else if (t.status === 'passed' || (!fileFailed && (t.status === 'skipped' || t.status === 'todo'))) continue;
      else lines.push(`${name} › ${title}: did not run`);
      named++;
    }
    if (fileFailed && named === 0) lines.push(`${name}: ${firstLine(file.message) || 'failed outside its tests'}`);
  }
  // As summarizeVitest counts it: the run failed with nothing in it failed (no test files found, say).
  if (report.success === false && lines.length === 0) lines.push('the run failed outside any test file (see its output above)');
  return lines;
}

/** The same for Playwright: failed and not-run tests, and errors outside any test. */
export function playwrightNotPassed(report) {
  const lines = [];
  const walk = (suite, path) => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests ?? []) {
        const outcome = classifyPlaywrightTest(test);
        if (outcome === 'passed' || outcome === 'skipped') continue;
        const where = spec.file ? `${spec.file}:${spec.line ?? '?'}` : path.join(' › ');
        const error = (test.results ?? []).map((r) => r.errors?.[0]?.message ?? r.error?.message).find(Boolean);
        lines.push(`${where} › ${spec.title}: ${outcome === 'notRun' ? 'did not run' : firstLine(error)}`);
      }
    }
    for (const child of suite.suites ?? []) walk(child, [...path, child.title ?? '']);
  };
  for (const suite of report.suites ?? []) walk(suite, [suite.title ?? '']);
  for (const e of report.errors ?? []) lines.push(`outside any test: ${firstLine(e?.message ?? e)}`);
  return lines;
}

/** The closing line the CI reader expects; not run and errors are folded into failed. */
export function closingLine({ passed, failed, skipped }) {
  return `${passed} passed, ${failed} failed, ${skipped} skipped`;
}
