import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startLab } from '../../src/main/testing';

// A file of its own: the HTTPS receivers' certificate folder is kept per process (module state), and
// this must be the process's first lab. A test runner's worker ends without an 'exit' event, so the
// last stop() is what removes it (it was left in $TMPDIR after every run).

const saved = process.env.TMPDIR;
let dir: string | undefined;
afterEach(() => {
  // Assigning undefined would store the string "undefined" (process.env holds strings only).
  if (saved === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = saved;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('the last stop() removes the certificate folder; a later lab makes it again', async () => {
  dir = mkdtempSync(join(tmpdir(), 'wl-testing-tmp-'));
  process.env.TMPDIR = dir;
  expect(tmpdir()).toBe(dir);
  const a = await startLab();
  const b = await startLab();
  const certs = () => readdirSync(dir!).filter((f) => f.startsWith('webhook-lab-testing-cert-'));
  expect(certs()).toHaveLength(1);
  await a.stop();
  // b still runs: kept for the next lab.
  expect(certs()).toHaveLength(1);
  await b.stop();
  expect(readdirSync(dir)).toEqual([]);
  const c = await startLab();
  expect(certs()).toHaveLength(1);
  await c.stop();
  expect(readdirSync(dir)).toEqual([]);
  expect(existsSync(dir)).toBe(true);
});

it('labs started and stopped one after another leave one exit hook at most, not one each', async () => {
  const before = process.listenerCount('exit');
  for (let i = 0; i < 3; i++) await (await startLab()).stop();
  expect(process.listenerCount('exit') - before).toBeLessThanOrEqual(1);
});
