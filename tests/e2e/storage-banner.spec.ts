import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, startLab, test, type Lab } from './lab-fixture';
import { openApp } from './ui-steps';

// Issue 22: a full disk shows a banner saying why, and it goes away by itself once there is room.
// The lab's data folder is on a small tmpfs of this spec's own, filled with a file; where this
// machine cannot mount one, the spec is skipped with the reason printed.

test.describe.configure({ mode: 'serial' });

let disk: string | null = null;
let skipWhy = '';
let lab: Lab;
let stopLab: (() => Promise<void>) | undefined;

test.beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wl-e2e-fulldisk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir], { stdio: 'pipe' });
    disk = dir;
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    skipWhy = `cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]})`;
    process.stdout.write(`storage-banner.spec: skipped: ${skipWhy}\n`);
    return;
  }
  mkdirSync(join(disk, 'data'));
  ({ lab, stop: stopLab } = await startLab({ dataDir: join(disk, 'data') }));
  await lab.api('POST', '/sources', { name: 'disk', writeKey: 'wk_disk', webhooks: { enabled: false, urls: [] } });
});

test.afterAll(async () => {
  await stopLab?.();
  if (disk) {
    execFileSync('umount', ['-l', disk]);
    rmSync(disk, { recursive: true, force: true });
  }
});

const bigCall = (i: number) => JSON.stringify({ type: 'track', userId: 'u', event: 'Big', messageId: `big-${i}`, properties: { blob: 'x'.repeat(30_000) } });

test('a full disk shows why in a banner, and the banner goes once there is room again', async ({ page }) => {
  test.skip(!disk, skipWhy);
  await openApp(page, lab, 'inspector');
  await expect(page.getByTestId('storage-banner')).toHaveCount(0);

  const filler = join(disk!, 'filler');
  const fd = openSync(filler, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(64 * 1024));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  let status = 200;
  for (let i = 0; i < 200 && status === 200; i++) {
    const res = await fetch(`${lab.collectorUrl}/v1/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('wk_disk:').toString('base64')}` },
      body: bigCall(i),
    });
    status = res.status;
    await res.arrayBuffer();
  }
  expect(status).toBe(503);

  const banner = page.getByTestId('storage-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('The lab cannot store anything right now');
  await expect(banner).toContainText('The disk holding the data folder is full');
  await expect(banner).toContainText(lab.dataDir);

  rmSync(filler);
  await expect(banner).toHaveCount(0, { timeout: 15_000 });
});
