import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, ownLab, test } from './lab-fixture';
import { openApp, row } from './ui-steps';

// Issue 26, "re-open an export": a JSON Lines export made through the API is opened in the UI (a file
// input, nothing sent to the engine) and its calls are shown read-only in place of the live ones, with
// the same list and detail; a bad line is reported by number; Back to live calls returns to the lab.
const lab = ownLab();
const SHOTS = resolve(__dirname, process.env.UPDATE_SCREENSHOTS ? '../../docs/screenshots' : '../../test-results/screenshots');

async function track(writeKey: string, event: string) {
  const res = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ userId: 'u-export', event }),
  });
  expect(res.status).toBe(200);
}

test('an exported file opens read-only beside the live calls, with its bad line reported, and Back to live calls', async ({ page }) => {
  const sink = await lab.api<{ url: string }>('POST', '/receivers', { name: 'export-sink', path: '/export-sink' });
  const source = await lab.api<{ writeKey: string }>('POST', '/sources', { name: 'exported', webhooks: { enabled: true, urls: [{ url: sink.url, headers: {} }] } });
  for (const event of ['Export One', 'Export Two', 'Export Three']) await track(source.writeKey, event);
  await expect
    .poll(async () => (await lab.api<{ items: { deliveryState: string }[] }>('GET', '/messages')).items.filter((c) => c.deliveryState === 'delivered').length)
    .toBe(3);

  const res = await fetch(`${lab.apiBase}/api/export/file?format=jsonl`, { headers: { Authorization: `Bearer ${lab.token}` } });
  expect(res.status).toBe(200);
  const lines = (await res.text()).trimEnd().split('\n');
  expect(lines).toHaveLength(3);
  // A line broken on the way (line 2 of the file), and CRLF endings as an editor on Windows saves them.
  const text = [lines[0], '{"call": {"id": 1,', lines[1], lines[2], ''].join('\r\n');
  const dir = mkdtempSync(join(tmpdir(), 'webhook-lab-open-export-'));
  const file = join(dir, 'calls.jsonl');
  writeFileSync(file, text);
  try {
    await openApp(page, lab, 'inspector');
    await expect(row(page, 'Export One')).toBeVisible();
    await page.getByTestId('export-menu-toggle').click();
    await expect(page.getByTestId('open-export')).toBeVisible();
    await page.getByTestId('open-export-file').setInputFiles(file);

    await expect(page.getByTestId('export-banner-text')).toHaveText('Viewing calls.jsonl: 3 calls, read-only');
    await expect(page.getByTestId('screen-inspector')).toHaveAttribute('data-read-only', 'export');
    await expect(page.getByTestId('export-problem')).toHaveCount(1);
    await expect(page.getByTestId('export-problem')).toHaveAttribute('data-line', '2');
    await expect(page.getByTestId('export-problem')).toContainText(/^line 2: not JSON: /);
    // The live controls are not there: no filters, pause, export, retry, clear or drafting.
    for (const id of ['filter-search', 'pause-button', 'export-menu-toggle', 'retry-matching', 'clear-calls', 'picks-draft']) await expect(page.getByTestId(id)).toHaveCount(0);
    await expect(page.getByTestId('export-view-total')).toContainText('3 calls from calls.jsonl · read-only');
    await expect(page.getByTestId('call-row')).toHaveCount(3);
    // Newest first, as the live list.
    await expect(page.getByTestId('call-label')).toHaveText(['Export Three', 'Export Two', 'Export One']);
    await expect(row(page, 'Export Two')).toHaveAttribute('data-status', 'delivered');

    // A call that arrives meanwhile stays out of the file's view.
    await track(source.writeKey, 'Export Live');
    await expect.poll(async () => (await lab.api<{ total: number }>('GET', '/messages')).total).toBe(4);

    const hash = await page.evaluate(() => location.hash);
    await row(page, 'Export Two').click();
    const detail = page.getByTestId('call-detail');
    await expect(detail).toBeVisible();
    await expect(detail.locator('h2')).toContainText('Export Two');
    await expect(page.getByTestId('url-timeline')).toHaveAttribute('data-url', sink.url);
    await expect(page.getByTestId('url-timeline')).toHaveAttribute('data-attempts', '1');
    for (const id of ['replay-button', 'replay-url', 'edit-replay']) {
      await expect(page.getByTestId(id)).toBeDisabled();
      await expect(page.getByTestId(id)).toHaveAttribute('title', /^Read-only: this call is from an opened export file/);
    }
    await expect(page.getByTestId('copy-body')).toBeEnabled();
    await page.screenshot({ path: `${SHOTS}/inspector-opened-export.png` });
    // The address keeps naming the lab's calls, not the file's.
    expect(await page.evaluate(() => location.hash)).toBe(hash);
    await expect(page.getByTestId('call-row')).toHaveCount(3);
    // Ctrl-click picks nothing in the file.
    await row(page, 'Export One').click({ modifiers: ['Control'] });
    await expect(page.getByTestId('toast-info').last()).toContainText('this export is read-only');
    await expect(row(page, 'Export One')).not.toHaveAttribute('data-picked', 'true');

    await page.getByTestId('export-view-back').click();
    await expect(page.getByTestId('export-banner')).toHaveCount(0);
    await expect(page.getByTestId('screen-inspector')).not.toHaveAttribute('data-read-only', 'export');
    await expect(row(page, 'Export Live')).toBeVisible();
    await expect(page.getByTestId('call-row')).toHaveCount(4);
    await expect(page.getByTestId('replay-button')).toHaveCount(0);
    await row(page, 'Export Two').click();
    await expect(page.getByTestId('replay-button')).toBeEnabled();

    // Open again: a link to one of the lab's calls (its permalink) leaves the file's view for it.
    await page.getByTestId('detail-pane').getByRole('button', { name: 'Close detail' }).click();
    await page.getByTestId('open-export-file').setInputFiles(file);
    await expect(page.getByTestId('export-banner-text')).toHaveText('Viewing calls.jsonl: 3 calls, read-only');
    const live = (await lab.api<{ items: { id: number; label: string }[] }>('GET', '/messages')).items.find((c) => c.label === 'Export Live')!;
    await page.evaluate((id) => (location.hash = `#/inspector/${id}`), live.id);
    await expect(page.getByTestId('export-banner')).toHaveCount(0);
    await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(live.id));
    await expect(page.getByTestId('replay-button')).toBeEnabled();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
