#!/usr/bin/env node
// `npm test`: build, typecheck, lint, unit + integration (Vitest), end-to-end (Playwright in Chromium).
// Ends with one line `N passed, N failed, N skipped` summing both runners. Skipped is only a test
// someone chose to skip: one that did not run (a serial suite stopped at a failure) counts as failed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { closingLine, playwrightNotPassed, summarizePlaywright, summarizeVitest, vitestNotPassed } from './test-summary.mjs';

const root = resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
// Not test-results/: Playwright empties that folder when it starts.
const results = join(root, 'test-reports');
rmSync(results, { recursive: true, force: true });
mkdirSync(results, { recursive: true });

function run(title, cmd, args, env = {}) {
  process.stdout.write(`\n=== ${title}\n`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status === 0;
}
/** Runs the steps at once; prints each one's title and output, in the order given, once all ended. */
async function runTogether(steps) {
  const ran = steps.map(([title, ...cmds]) => {
    const out = [];
    // A step's commands run one after the other; the next only after the one before succeeded.
    const ended = (async () => {
      for (const [cmd, args] of cmds) {
        const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
        child.stdout.on('data', (c) => out.push(c));
        child.stderr.on('data', (c) => out.push(c));
        const r = await new Promise((resolve) => {
          child.on('error', (err) => resolve({ ok: false, err }));
          child.on('close', (code) => resolve({ ok: code === 0 }));
        });
        if (!r.ok) return r;
      }
      return { ok: true };
    })();
    return { title, out, ended };
  });
  const results = [];
  for (const { title, out, ended } of ran) {
    const { ok, err } = await ended;
    process.stdout.write(`\n=== ${title}\n`);
    process.stdout.write(Buffer.concat(out));
    if (err) process.stdout.write(`${err.message}\n`);
    results.push([title, ok]);
  }
  return results;
}
/** Adds a runner's counts; a runner that failed with nothing failed in its report is a failed step too. */
function add(name, counts, exitedOk) {
  passed += counts.passed;
  failed += counts.failed + counts.notRun + counts.errors;
  skipped += counts.skipped;
  if (counts.notRun) process.stdout.write(`${name}: ${counts.notRun} did not run (counted as failed)\n`);
  if (counts.errors) process.stdout.write(`${name}: ${counts.errors} failure(s) outside any test (counted as failed)\n`);
  if (!exitedOk && counts.failed + counts.notRun + counts.errors === 0) failedSteps.push(`${name} (exited with an error)`);
}
let passed = 0, failed = 0, skipped = 0;
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** Playwright's own Chromium where installed, else the system one; null when there is none. */
function findChromium() {
  if (process.env.CHROMIUM_PATH && existsSync(process.env.CHROMIUM_PATH)) return process.env.CHROMIUM_PATH;
  try {
    const own = require('@playwright/test').chromium.executablePath();
    if (own && existsSync(own)) return own;
  } catch {
    // no Playwright browser downloaded
  }
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome']) {
    if (existsSync(p)) return p;
  }
  return null;
}

let failedSteps = [];
const built = run('build', process.execPath, [join(root, 'node_modules/electron-vite/bin/electron-vite.js'), 'build']);
if (!built) failedSteps.push('build');
// The published client's declarations (out/types), which the npm package test installs and compiles
// against, then the typecheck (the e2e example imports `webhook-lab/testing`, typed by those
// declarations: it must not start before they are written); beside them the lint. Each takes ~30 s
// of one core; each one's output is printed whole once all are done.
for (const [title, ok] of await runTogether([
  ['build:types, then typecheck', [bin('tsc'), ['-p', 'tsconfig.types.json']], [bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']]],
  ['lint', [bin('eslint'), ['.']]],
])) {
  if (!ok) failedSteps.push(title);
}

const vitestJson = join(results, 'vitest.json');
const vitestOk = run('unit + integration (vitest)', bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`]);

const pwJson = join(results, 'playwright.json');
const chromium = findChromium();
let e2eMissing = false;
let playwrightOk = false;
if (chromium) {
  // The build above is what the end-to-end tests run: Playwright's global setup need not build it again
  // (~20 s); after a failed build it tries, and says why.
  const skipBuild = built ? { E2E_SKIP_BUILD: '1' } : {};
  playwrightOk = run('end-to-end (playwright, ' + chromium + ')', bin('playwright'), ['test', '--reporter=list,json'], { CHROMIUM_PATH: chromium, PLAYWRIGHT_JSON_OUTPUT_NAME: pwJson, ...skipBuild });
} else {
  e2eMissing = true;
  process.stdout.write(
    '\n=== end-to-end: no Chromium found.\n' +
      'Install one: `npx playwright install chromium` (needs internet), or on Debian/Ubuntu `sudo apt-get install -y chromium`,\n' +
      'or point CHROMIUM_PATH at a Chrome/Chromium binary. The end-to-end tests count as failed until then.\n',
  );
}

process.stdout.write('\n');
// What did not pass is listed last, above the closing line: a CI log's tail names it.
const notPassed = [];
if (existsSync(vitestJson)) {
  const report = JSON.parse(readFileSync(vitestJson, 'utf8'));
  add('vitest', summarizeVitest(report), vitestOk);
  notPassed.push(...vitestNotPassed(report, root).map((l) => `vitest: ${l}`));
} else failedSteps.push('vitest (no report)');
// Not the report's stats: they count a test that did not run as skipped.
if (existsSync(pwJson)) {
  const report = JSON.parse(readFileSync(pwJson, 'utf8'));
  add('playwright', summarizePlaywright(report), playwrightOk);
  notPassed.push(...playwrightNotPassed(report).map((l) => `playwright: ${l}`));
} else if (chromium) failedSteps.push('playwright (no report)');
if (e2eMissing) failedSteps.push('end-to-end (no browser)');

if (notPassed.length) {
  process.stdout.write(`did not pass (${notPassed.length}):\n`);
  for (const line of notPassed.slice(0, 30)) process.stdout.write(`  ${line}\n`);
  if (notPassed.length > 30) process.stdout.write(`  … and ${notPassed.length - 30} more (test-reports/)\n`);
}
if (failedSteps.length) process.stdout.write(`failed steps: ${failedSteps.join(', ')}\n`);
process.stdout.write(`${closingLine({ passed, failed: failed + failedSteps.length, skipped })}\n`);
process.exit(failed === 0 && failedSteps.length === 0 ? 0 : 1);
