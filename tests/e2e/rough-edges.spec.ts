import type { Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { resolve } from 'node:path';
import { expect, startLab, test, type Lab } from './lab-fixture';
import { openApp, row, expectCopied } from './ui-steps';

// Issue 26's rough edges on screen: danger buttons stay readable under the pointer and the focus in
// both themes, time-warp is said in the sidebar while it is on, and a search that misses the calls'
// fields offers to search inside bodies, then marks the term in the call's body. Its own server.

test.describe.configure({ mode: 'serial' });

// docs/ui.md's screenshots of these states, refreshed only on request like the other specs'.
const SHOTS = resolve(__dirname, process.env.UPDATE_SCREENSHOTS ? '../../docs/screenshots' : '../../test-results/screenshots');
mkdirSync(SHOTS, { recursive: true });

let lab: Lab;
let stopLab: () => Promise<void>;

test.beforeAll(async () => {
  ({ lab, stop: stopLab } = await startLab());
});
test.afterAll(async () => {
  await stopLab?.();
});

/** WCAG contrast ratio of two computed `rgb(…)` colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

async function colours(page: Page, testId: string) {
  return page.getByTestId(testId).evaluate((el) => {
    const s = getComputedStyle(el);
    return { bg: s.backgroundColor, fg: s.color };
  });
}

for (const scheme of ['light', 'dark'] as const) {
  test(`a danger confirm button stays red and readable under the pointer and the focus (${scheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await lab.api('POST', '/sources', { name: `danger-${scheme}` });
    await openApp(page, lab, 'destinations');
    await page.locator(`[data-testid="source-item"][data-name="danger-${scheme}"]`).click();
    await page.getByTestId('delete-source').click();
    const confirm = page.getByTestId('delete-source-confirm');
    await expect(confirm).toBeVisible();
    const still = await colours(page, 'delete-source-confirm');
    await confirm.hover();
    const hovered = await colours(page, 'delete-source-confirm');
    await page.mouse.move(0, 0);
    await confirm.focus();
    const focused = await colours(page, 'delete-source-confirm');
    for (const [state, c] of Object.entries({ still, hovered, focused })) {
      expect(contrast(c.bg, c.fg), `${state}: ${c.fg} on ${c.bg}`).toBeGreaterThanOrEqual(4.5);
    }
    // Not the plain buttons' grey.
    const plainHover = await page.getByTestId('delete-source-cancel').evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(hovered.bg).not.toBe(plainHover);
    await page.getByTestId('delete-source-cancel').click();
  });
}

test('the sidebar says time-warp is on, with its factor, and links to the control; gone at ×1', async ({ page }) => {
  await openApp(page, lab, 'inspector');
  await expect(page.getByTestId('time-warp-indicator')).toHaveCount(0);
  await lab.api('PATCH', '/settings', { timeScale: 60 });
  await page.reload();
  const indicator = page.getByTestId('time-warp-indicator');
  await expect(indicator).toHaveText('Time-warp ×60');
  await page.screenshot({ path: `${SHOTS}/sidebar-time-warp.png`, clip: { x: 0, y: 0, width: 260, height: 700 } });
  await indicator.click();
  await expect(page.getByTestId('screen-receivers')).toBeVisible();
  await page.getByTestId('receivers-time-warp-1').click();
  await expect(indicator).toHaveCount(0);
});

test('a search that misses the fields offers bodies in one click, and the term is marked in the call', async ({ page }) => {
  const source = await lab.api<{ writeKey: string }>('POST', '/sources', { name: 'search-edge' });
  const res = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
    body: JSON.stringify({ userId: 'u-edge', event: 'Coupon Applied', properties: { coupon: 'SPRING-Zebra-42' } }),
  });
  expect(res.status).toBe(200);
  await openApp(page, lab, 'inspector');
  await expect(row(page, 'Coupon Applied')).toBeVisible();
  await page.getByTestId('filter-search').fill('zebra');
  await expect(page.getByTestId('search-bodies-offer')).toContainText('“zebra”');
  await page.getByTestId('search-bodies').click();
  await expect(page.getByTestId('filter-search-bodies')).toBeChecked();
  await row(page, 'Coupon Applied').click();
  const hit = page.getByTestId('call-raw').getByTestId('search-hit');
  await expect(hit).toHaveText('Zebra');
  // The raw bytes view marks it too.
  await page.getByTestId('filter-search').fill('u-edge');
  await expect(page.getByTestId('call-raw').getByTestId('search-hit')).toHaveText('u-edge');
});

test('a call sent gzip-compressed is shown as the JSON it was, saying it came gzip', async ({ page }) => {
  const source = await lab.api<{ writeKey: string }>('POST', '/sources', { name: 'gzip-edge' });
  const res = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
    body: gzipSync(JSON.stringify({ userId: 'u-gzip', event: 'Compressed Sent', properties: { packed: true } })),
  });
  expect(res.status).toBe(200);
  await openApp(page, lab, 'inspector');
  await row(page, 'Compressed Sent').click();
  await expect(page.getByTestId('call-request-meta')).toContainText('application/json (gzip)');
  await expect(page.getByTestId('call-raw')).toContainText('"packed": true');
});

test('secrets: Copy beside Show copies the hidden secret; the verify box checks with the source\'s secret in one click, its fields labelled Secret', async ({ page, context, receivers }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(lab.uiUrl).origin });
  const sw = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const source = await lab.api<{ id: string }>('POST', '/sources', {
    name: 'secret-edge',
    webhooks: { enabled: true, sharedSecret: 'edge-shared-secret', standardWebhooksSecret: sw, urls: [{ url: `${receivers.ok.url}/secret-edge`, headers: {} }] },
  });
  await openApp(page, lab, 'destinations');
  await page.locator('[data-testid="source-item"][data-name="secret-edge"]').click();
  await expect(page.getByTestId('wh-secret')).toHaveAttribute('type', 'password');
  await page.getByTestId('wh-secret-copy').click();
  await expectCopied(page.getByTestId('wh-secret-copy'));
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('edge-shared-secret');
  // Still hidden: copying does not show it.
  await expect(page.getByTestId('wh-secret')).toHaveAttribute('type', 'password');
  await page.getByTestId('wh-sw-copy').click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(sw);

  const sent = await lab.api<{ call: { id: number } }>('POST', `/sources/${source.id}/test`);
  await page.getByTestId('nav-inspector').click();
  const callRow = page.locator(`[data-testid="call-row"][data-id="${sent.call.id}"]`);
  await expect(callRow).toHaveAttribute('data-status', 'delivered');
  await callRow.click();
  const attempt = page.getByTestId('attempt').first();
  // When it went out, from the call's arrival (no time warp here: the wall clock alone).
  await expect(attempt.getByTestId('attempt-offset')).toHaveText(/^\+\d+(\.\d+)? (ms|s)$/);
  await expect(attempt.getByTestId('verify-box').locator('.verify-field').first()).toContainText('Secret · checks X-Signature');
  await attempt.getByTestId('verify-secret-source').click();
  await expect(attempt.getByTestId('verify-secret')).toHaveValue('edge-shared-secret');
  await expect(attempt.getByTestId('verify-result')).toHaveAttribute('data-status', 'match');
  await attempt.getByTestId('verify-sw-secret-source').click();
  await expect(attempt.getByTestId('verify-sw-result')).toHaveAttribute('data-status', 'match');
  await attempt.getByTestId('verify-box').screenshot({ path: `${SHOTS}/verify-source-secret.png` });

  // Both secrets rotated since, from the Destinations screen: on this older attempt the source's
  // secrets (version 2) do not match, and the lab checks the version that signed it, which it keeps
  // for the rotation window, without showing it.
  await page.getByTestId('nav-destinations').click();
  await page.locator('[data-testid="source-item"][data-name="secret-edge"]').click();
  await page.getByTestId('rotate-shared-secret').click();
  await expect(page.getByTestId('rotate-shared-secret-effect')).toContainText('a receiver that checks only the current one refuses them (a 401, say)');
  await page.getByTestId('secret-rotation').screenshot({ path: `${SHOTS}/rotate-shared.png` });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.getByTestId('secret-rotation').screenshot({ path: `${SHOTS}/rotate-shared-dark.png` });
  await page.emulateMedia({ colorScheme: 'light' });
  const shared2 = await page.getByTestId('rotate-shared-secret-value').inputValue();
  await page.getByTestId('rotate-shared-secret-copy').click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shared2);
  await page.getByTestId('rotate-shared-secret-confirm').click();
  await expect(page.getByTestId('rotate-shared-secret-version')).toHaveText('version 2');
  // Your own secret instead of the one proposed (the receiver has it already).
  const sw2 = `whsec_${Buffer.from('another key of 24 bytes!').toString('base64')}`;
  await page.getByTestId('rotate-sw-secret').click();
  await page.getByTestId('rotate-sw-secret-value').fill(sw2);
  await page.getByTestId('rotate-sw-secret-confirm').click();
  await expect(page.getByTestId('rotate-sw-secret-version')).toHaveText('version 2');
  await page.getByTestId('nav-inspector').click();
  await callRow.click();
  await attempt.getByTestId('verify-sw-secret-source').click();
  await expect(attempt.getByTestId('verify-sw-secret')).toHaveValue(sw2);
  await expect(attempt.getByTestId('verify-sw-result')).toHaveAttribute('data-status', 'match');
  await expect(attempt.getByTestId('verify-sw-result')).toHaveText(
    "Signed with version 1 of the source's Standard Webhooks secret: ✓ match (the source's is now version 2). The lab keeps that version until nothing needs it; it was checked without being shown.",
  );
  await expect(attempt.getByTestId('verify-sw-result')).not.toContainText(sw);
  await attempt.getByTestId('verify-secret-source').click();
  await expect(attempt.getByTestId('verify-secret')).toHaveValue(shared2);
  await expect(attempt.getByTestId('verify-result')).toHaveAttribute('data-status', 'match');
  await expect(attempt.getByTestId('verify-result')).toContainText("Signed with version 1 of the source's shared secret: ✓ match (the source's is now version 2)");
  await attempt.getByTestId('verify-box').screenshot({ path: `${SHOTS}/verify-kept-version.png` });
  // The window closed (set to 0): nothing needs version 1 any more, the lab erases it and says so.
  await lab.api('PATCH', '/settings', { secretRotationWindowMs: 0 });
  await expect(async () => {
    await attempt.getByTestId('verify-secret-source').click();
    await expect(attempt.getByTestId('verify-result')).toContainText("Signed with version 1 of the source's shared secret, since retired (the source's is now version 2): the lab no longer keeps it", { timeout: 500 });
  }).toPass();
  await attempt.getByTestId('verify-sw-secret-source').click();
  await expect(attempt.getByTestId('verify-sw-result')).toContainText("Signed with version 1 of the source's Standard Webhooks secret, since retired");
  await lab.api('PATCH', '/settings', { secretRotationWindowMs: 86_400_000 });
});

test('at 1024×700 with the detail open, the status word is never cut: the URL note turns into ⚠1/4 and the Actions tag into A×2', async ({ page, receivers }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  const source = await lab.api<{ id: string }>('POST', '/sources', {
    name: 'narrow-status',
    webhooks: {
      enabled: true,
      mode: 'both',
      // The second URL fails for good (TLS to a plain-HTTP port): delivered, 1 of 4 (with the Actions requests) failed.
      urls: [
        { url: `${receivers.ok.url}/narrow`, headers: {} },
        { url: `https://127.0.0.1:${receivers.ok.port}/narrow-tls`, headers: {} },
      ],
      mappings: [
        { name: 'one', url: `${receivers.ok.url}/narrow-a`, method: 'POST' },
        { name: 'two', url: `${receivers.ok.url}/narrow-b`, method: 'POST' },
      ],
    },
  });
  const sent = await lab.api<{ call: { id: number } }>('POST', `/sources/${source.id}/test`);
  await openApp(page, lab, 'inspector');
  const callRow = page.locator(`[data-testid="call-row"][data-id="${sent.call.id}"]`);
  await expect(callRow.getByTestId('actions-tag')).toHaveAttribute('data-state', 'delivered');
  await expect(callRow.locator('.chip')).toHaveAttribute('data-status', 'delivered');
  await expect(callRow.locator('.url-note')).toBeAttached();
  await callRow.click();
  await expect(page.getByTestId('detail-pane')).toBeVisible();
  // Two Classic URLs and two Actions requests: one of the four failed. Its text (what a screen reader
  // and a copy get) stays the long note; what shows is the short one.
  const note = callRow.locator('.url-note');
  await expect(note).toHaveText(' · 1 of 4 URLs failed');
  await expect(note).toHaveAttribute('data-short', '⚠1/4');
  expect(await note.evaluate((n) => [getComputedStyle(n).fontSize, getComputedStyle(n, '::after').content])).toEqual(['0px', '" ⚠1/4"']);
  await expect(callRow.locator('.tag-short')).toHaveText('A×2');
  const fit = await callRow.evaluate((row) => {
    const word = row.querySelector('.chip-word')!.getBoundingClientRect();
    const chip = row.querySelector('.chip')!.getBoundingClientRect();
    const cell = row.querySelector('.status-cell')!.getBoundingClientRect();
    const tag = row.querySelector('.actions-tag')!.getBoundingClientRect();
    return { word: word.right, chip: chip.right, cell: cell.right, tagLeft: tag.left, tagRight: tag.right };
  });
  expect(fit.word, 'the word ends inside the chip').toBeLessThanOrEqual(fit.chip - 6);
  expect(fit.chip).toBeLessThanOrEqual(fit.tagLeft);
  expect(fit.tagRight, 'the tag ends inside the cell').toBeLessThanOrEqual(fit.cell + 0.5);
  await page.screenshot({ path: `${SHOTS}/inspector-narrow-status.png` });
});
