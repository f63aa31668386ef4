import { createHmac } from 'node:crypto';
import { resolve } from 'node:path';
import type { Page } from '@playwright/test';
import { startHttpsReceiver, startReceiver, type TestReceiver } from '../helpers/receiver';
import { selfSignedCert } from '../helpers/tls';
import { expect, startLab, test, type Lab } from './lab-fixture';
import { openApp, timeline } from './ui-steps';

// Issue 14, the attempt view and acting on what you see: the body shown once per delivery (an
// attempt shows its own only when edited), highlighted and foldable; each attempt's timing; replay
// with an edited body from the UI; retry the failed calls matching the filters and clear all calls,
// each confirmed; the inspector's keys; the resizable split, remembered; nothing clipped at
// 1024×700. Its own server and receivers; fails on any console error.

test.describe.configure({ mode: 'serial' });

const SHOTS = resolve(__dirname, process.env.UPDATE_SCREENSHOTS ? '../../docs/screenshots' : '../../test-results/screenshots');

const SECRET = 'insp-secret';
let lab: Lab;
let stopLab: () => Promise<void>;
let ok: TestReceiver;
/** 400 until `healthy` (failed, never retried by the schedule), then 200. */
let broken: TestReceiver & { healthy?: boolean };
let flaky: TestReceiver;
const ids: Record<string, number> = {};
const sources: Record<string, { id: string; writeKey: string }> = {};

async function track(source: string, userId: string, event: string): Promise<void> {
  const res = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${sources[source].writeKey}:`).toString('base64')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ userId, event }),
  });
  expect(res.status).toBe(200);
}

type Summary = { id: number; label: string | null; deliveryState: string | null; attemptCount: number };
const list = () => lab.api<{ items: Summary[]; total: number }>('GET', '/messages?limit=100');
const byLabel = async (label: string) => (await list()).items.find((c) => c.label === label);

test.beforeAll(async () => {
  ({ lab, stop: stopLab } = await startLab());
  ok = await startReceiver((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true,"items":[1,2,3]}'));
  broken = await startReceiver((_req, res) => void (broken.healthy ? res.writeHead(200).end('ok') : res.writeHead(400).end('bad request')));
  flaky = await startReceiver((_req, res) => void res.writeHead(500).end('down'));
  // A first retry 30 min away: a retrying call cannot change state under a test.
  await lab.api('PATCH', '/settings', { retrySchedule: { preset: 'custom', delaysMs: [30 * 60_000], jitter: 0, windowMs: 4 * 3600_000 } });
  for (const [name, url] of [['shop', `${ok.url}/hook`], ['broken', `${broken.url}/hook`], ['flaky', `${flaky.url}/hook`]] as const) {
    sources[name] = await lab.api('POST', '/sources', { name, webhooks: { enabled: true, sharedSecret: SECRET, urls: [{ url, headers: {} }] } });
  }
  await track('shop', 'ada', 'Shop One');
  await track('shop', 'ada', 'Shop Two');
  await track('shop', 'bob', 'Shop Three');
  await track('broken', 'ada', 'Broken One');
  await track('broken', 'bob', 'Broken Two');
  await track('flaky', 'ada', 'Flaky');
  await expect
    .poll(async () => (await list()).items.map((c) => `${c.label}:${c.deliveryState}`).sort())
    .toEqual(['Broken One:failed', 'Broken Two:failed', 'Flaky:retrying', 'Shop One:delivered', 'Shop Three:delivered', 'Shop Two:delivered']);
  for (const c of (await list()).items) ids[c.label!] = c.id;
});
test.afterAll(async () => {
  await Promise.all([ok?.close(), broken?.close(), flaky?.close()]);
  await stopLab?.();
});


const rowOf = (page: Page, label: string) => page.locator(`[data-testid="call-row"][data-id="${ids[label]}"]`);

test('the body is shown once per delivery, highlighted and foldable; each attempt shows its timing', async ({ page }) => {
  await lab.api('POST', `/messages/${ids['Shop One']}/replay`, {});
  await lab.api('POST', `/messages/${ids['Shop One']}/replay`, {});
  await openApp(page, lab, 'inspector');
  await rowOf(page, 'Shop One').click();
  const hook = timeline(page, `${ok.url}/hook`);
  await expect(hook).toHaveAttribute('data-attempts', '3');
  // One body for the delivery, none repeated in its three attempts.
  await expect(page.getByTestId('delivery-body')).toHaveCount(1);
  await expect(hook.getByTestId('attempt-body')).toHaveCount(0);
  // Highlighted (CodeMirror, loaded lazily) and foldable: folding the top object hides its lines.
  const body = page.getByTestId('delivery-body');
  await expect(body).toHaveAttribute('data-mode', 'pretty');
  await expect(body.locator('.cm-editor')).toBeVisible();
  await expect(body.locator('.cm-content')).toContainText('"event": "Shop One"');
  await body.locator('.cm-foldGutter span[title="Fold line"]').first().click();
  await expect(body.locator('.cm-foldPlaceholder')).toHaveCount(1);
  await expect(body.locator('.cm-content')).not.toContainText('"event"');
  // Raw: the exact bytes the receiver got.
  await page.getByTestId('toggle-raw').click();
  const got = ok.requests.find((r) => JSON.parse(r.body.toString()).event === 'Shop One')!;
  await expect(body).toHaveText(got.body.toString('utf8'));
  // Timing: measured for every attempt; the first made a new connection, each part no more than the total.
  const timings = hook.getByTestId('attempt-timing');
  await expect(timings).toHaveCount(3);
  for (let i = 0; i < 3; i++) await expect(timings.nth(i)).toHaveAttribute('data-measured', 'true');
  const detail = await lab.api<{ deliveries: { attempts: { timing: { connectMs: number | null; ttfbMs: number; totalMs: number; reused: boolean } }[] }[] }>(
    'GET',
    `/messages/${ids['Shop One']}`,
  );
  const [first, ...again] = detail.deliveries[0].attempts;
  expect(first.timing.reused).toBe(false);
  expect(first.timing.connectMs).toBeGreaterThanOrEqual(0);
  for (const a of [first, ...again]) {
    expect(a.timing.ttfbMs).toBeLessThanOrEqual(a.timing.totalMs);
    // A kept-alive connection an earlier attempt opened has no connect time of its own.
    if (a.timing.reused) expect(a.timing.connectMs).toBeNull();
  }
  await hook.getByTestId('attempt').first().locator('summary').click();
  await expect(hook.getByTestId('attempt').first().getByTestId('attempt-timing')).toContainText(/total \d/);
});

test('replay with an edited body from the UI: the receiver gets exactly the edited bytes, signed', async ({ page }) => {
  await openApp(page, lab, 'inspector');
  await rowOf(page, 'Shop Two').click();
  const hook = timeline(page, `${ok.url}/hook`);
  await expect(hook).toHaveAttribute('data-attempts', '1');
  await page.getByTestId('edit-replay').click();
  const editor = page.getByTestId('edit-replay-body').locator('.cm-content');
  await expect(editor).toContainText('"event": "Shop Two"');
  // Not JSON: refused in place, nothing sent.
  await editor.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText('{"type": "track",');
  await expect(page.getByTestId('edit-replay-error')).toContainText('Not valid JSON');
  await expect(page.getByTestId('edit-replay-send')).toBeDisabled();
  const edited = '{\n  "type": "track",\n  "event": "Shop Two (edited)",\n  "userId": "ada",\n  "properties": { "note": "café ☕" }\n}';
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(edited);
  const before = ok.requests.length;
  await page.getByTestId('edit-replay-send').click();
  await expect(page.getByTestId('edit-replay-panel')).toHaveCount(0);
  await expect(hook).toHaveAttribute('data-attempts', '2');
  const [got] = (await ok.waitForRequests(before + 1)).slice(before);
  expect(got.body.toString('utf8')).toBe(edited);
  expect(got.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(got.body).digest('hex'));
  // The new attempt shows the body it sent (it differs); the first does not; the delivery's body is unchanged.
  const editedAttempt = hook.locator('[data-testid="attempt"][data-edited="true"]');
  await expect(editedAttempt).toHaveCount(1);
  await expect(editedAttempt).toHaveAttribute('data-trigger', 'replay');
  await expect(hook.locator('[data-testid="attempt"][data-edited="false"]')).toHaveCount(1);
  await page.getByTestId('toggle-raw').click();
  await expect(editedAttempt.getByTestId('attempt-body')).toHaveText(edited);
  await expect(editedAttempt.getByTestId('attempt-signature')).toHaveText(got.headers['x-signature'] as string);
  await expect(page.getByTestId('delivery-body')).toContainText('"event":"Shop Two"');
});

test('retry the failed calls matching the filter: counted, confirmed, only those sent again', async ({ page }) => {
  await openApp(page, lab, 'inspector');
  await page.getByTestId('filter-source').selectOption({ label: 'broken' });
  await expect(page.getByTestId('call-row')).toHaveCount(2);
  const sentBefore = broken.requests.length;
  await page.getByTestId('retry-matching').click();
  await expect(page.getByTestId('bulk-confirm-text')).toContainText('Send 2 failed or expired calls matching the filters again');
  await page.getByTestId('retry-matching-cancel').click();
  await expect(page.getByTestId('bulk-confirm')).toHaveCount(0);
  expect(broken.requests.length).toBe(sentBefore);

  broken.healthy = true;
  await page.getByTestId('retry-matching').click();
  await page.getByTestId('retry-matching-confirm').click();
  await expect(page.getByTestId('toast-info').filter({ hasText: 'Retrying 2 failed or expired calls' })).toBeVisible();
  await expect(rowOf(page, 'Broken One')).toHaveAttribute('data-status', 'delivered');
  await expect(rowOf(page, 'Broken Two')).toHaveAttribute('data-status', 'delivered');
  expect(broken.requests.length).toBe(sentBefore + 2);
  // The retrying call (another source, and not failed) was left alone.
  expect(await byLabel('Flaky')).toMatchObject({ deliveryState: 'retrying', attemptCount: 1 });
  expect(flaky.requests).toHaveLength(1);
  const attempts = (await lab.api<{ deliveries: { attempts: { trigger: string }[] }[] }>('GET', `/messages/${ids['Broken One']}`)).deliveries[0].attempts;
  expect(attempts.map((a) => a.trigger)).toEqual(['scheduled', 'manual']);
});

test('keys: j/k and ↑/↓ move through the rows, Enter opens, Esc closes, / goes to the search', async ({ page }) => {
  await openApp(page, lab, 'inspector');
  const rows = page.getByTestId('call-row');
  await expect(rows).toHaveCount(6);
  const idAt = async (i: number) => Number(await rows.nth(i).getAttribute('data-id'));
  // Reachable by Tab: the first row is in the tab order, the others are not.
  await expect(rows.nth(0)).toHaveAttribute('tabindex', '0');
  await expect(rows.nth(1)).toHaveAttribute('tabindex', '-1');
  await page.keyboard.press('j');
  await expect(rows.nth(0)).toHaveAttribute('data-cursor', 'true');
  await expect(rows.nth(0)).toBeFocused();
  await page.keyboard.press('j');
  await expect(rows.nth(1)).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(rows.nth(2)).toBeFocused();
  await page.keyboard.press('k');
  await expect(rows.nth(1)).toBeFocused();
  await page.keyboard.press('ArrowUp');
  await expect(rows.nth(0)).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(await idAt(0)));
  await expect(rows.nth(0)).toHaveAttribute('aria-selected', 'true');
  // With the detail open, it follows the cursor.
  await page.keyboard.press('j');
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(await idAt(1)));
  await expect(rows.nth(1)).toHaveAttribute('aria-selected', 'true');
  await expect(rows.nth(0)).toHaveAttribute('aria-selected', 'false');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('detail-pane')).toHaveCount(0);
  await page.keyboard.press('/');
  await expect(page.getByTestId('filter-search')).toBeFocused();
  // Keys typed into the search are text, not shortcuts.
  await page.keyboard.type('jk');
  await expect(page.getByTestId('filter-search')).toHaveValue('jk');
  await expect(page.getByTestId('detail-pane')).toHaveCount(0);
});

test('the split between list and detail resizes by drag and by keys, and is remembered', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await openApp(page, lab, 'inspector');
  await rowOf(page, 'Shop Three').click();
  const pane = page.getByTestId('detail-pane');
  const handle = page.getByTestId('split-handle');
  const width = async () => (await pane.boundingBox())!.width;
  const start = await width();
  const h = (await handle.boundingBox())!;
  await page.mouse.move(h.x + h.width / 2, h.y + h.height / 2);
  await page.mouse.down();
  await page.mouse.move(h.x - 150, h.y + h.height / 2, { steps: 5 });
  await page.mouse.up();
  await expect.poll(width).toBeGreaterThan(start + 120);
  const dragged = await width();
  await page.reload();
  await expect(page.getByTestId('screen-inspector')).toBeVisible();
  await rowOf(page, 'Shop Three').click();
  await expect.poll(width).toBeGreaterThan(dragged - 3);
  expect(await width()).toBeLessThan(dragged + 3);
  // Keys: → gives the list room, Home goes back to the default.
  await handle.focus();
  await page.keyboard.press('ArrowRight');
  await expect.poll(width).toBeLessThan(dragged - 10);
  await page.keyboard.press('Home');
  await expect.poll(width).toBeLessThan(start + 3);
  expect(await width()).toBeGreaterThan(start - 3);
});

test('nothing in the inspector is clipped at 1024×700', async ({ page }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await openApp(page, lab, 'inspector');
  await page.evaluate(() => localStorage.removeItem('webhook-lab:inspector-detail-width'));
  // An attempt with an edited body, so its own body and chip are on screen too.
  await lab.api('POST', `/messages/${ids['Shop Three']}/replay`, { body: '{"type":"track","event":"Shop Three (edited)","userId":"bob"}' });
  await rowOf(page, 'Shop Three').click();
  const hook = timeline(page, `${ok.url}/hook`);
  await expect(hook).toHaveAttribute('data-attempts', '2');
  await expect(page.getByTestId('delivery-body').locator('.cm-editor')).toBeVisible();
  await page.getByTestId('edit-replay').click();
  await expect(page.getByTestId('edit-replay-body').locator('.cm-editor')).toBeVisible();
  await page.getByTestId('retry-matching').click();
  await expect(page.getByTestId('toast-info').filter({ hasText: 'No failed or expired call matches' })).toBeVisible();
  await page.getByTestId('clear-calls').click();
  await expect(page.getByTestId('bulk-confirm')).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/inspector-1024x700.png` });
  const clipped = await page.evaluate(() => {
    const out: string[] = [];
    const scope = [...document.querySelectorAll('[data-testid="detail-pane"], .inspector-head')];
    for (const root of scope) {
      for (const el of root.querySelectorAll<HTMLElement>('h2, h3, h4, button, summary, .chip, label')) {
        if (el.getClientRects().length === 0) continue;
        if (el.scrollWidth > el.clientWidth + 1) out.push(`${el.tagName} "${el.textContent?.trim().slice(0, 40)}" ${el.scrollWidth}>${el.clientWidth}`);
        // Not pushed out of its pane either.
        const r = el.getBoundingClientRect();
        const p = root.getBoundingClientRect();
        if (r.right > p.right + 1) out.push(`${el.tagName} "${el.textContent?.trim().slice(0, 40)}" past the right edge (${Math.round(r.right)} > ${Math.round(p.right)})`);
      }
    }
    // Each row's status chip whole (a narrow list drops columns instead).
    for (const chip of document.querySelectorAll<HTMLElement>('[data-testid="call-row"] .chip')) {
      const cell = chip.closest<HTMLElement>('[role="gridcell"]')!;
      if (cell.scrollWidth > cell.clientWidth + 1 || chip.scrollWidth > chip.clientWidth + 1) {
        out.push(`status "${chip.textContent}" cut: ${chip.scrollWidth}>${chip.clientWidth}, cell ${cell.scrollWidth}>${cell.clientWidth}`);
      }
    }
    return out;
  });
  expect(clipped).toEqual([]);
  await page.getByTestId('clear-calls-cancel').click();
});

test('clear all calls: confirmed, everything gone, new calls still arrive', async ({ page }) => {
  await openApp(page, lab, 'inspector');
  await expect(page.getByTestId('call-row')).toHaveCount(6);
  await page.getByTestId('clear-calls').click();
  await expect(page.getByTestId('bulk-confirm-text')).toContainText('Delete every call');
  await page.getByTestId('clear-calls-cancel').click();
  await expect(page.getByTestId('call-row')).toHaveCount(6);
  await page.getByTestId('clear-calls').click();
  await page.getByTestId('clear-calls-confirm').click();
  await expect(page.getByTestId('toast-info').filter({ hasText: 'Cleared 6 calls' })).toBeVisible();
  await expect(page.getByTestId('inspector-empty')).toContainText('No calls yet');
  expect((await list()).total).toBe(0);
  // The retrying call was canceled and deleted: its retry never comes.
  expect((await lab.api<{ pendingDeliveries: number }>('GET', '/health')).pendingDeliveries).toBe(0);
  await track('shop', 'ada', 'After Clear');
  await expect(page.getByTestId('call-row')).toHaveCount(1);
  await expect(page.getByTestId('call-row').first()).toHaveAttribute('data-status', 'delivered');
});

test('a receiver with a self-signed certificate: the attempt says the TLS handshake failed, with its connect time and how long it ran', async ({ page }) => {
  const selfSigned = await startHttpsReceiver(await selfSignedCert());
  try {
    sources.selfSigned = await lab.api('POST', '/sources', { name: 'self-signed', webhooks: { enabled: true, sharedSecret: SECRET, urls: [{ url: `${selfSigned.url}/hook`, headers: {} }] } });
    await track('selfSigned', 'ada', 'Untrusted');
    await expect.poll(async () => (await byLabel('Untrusted'))?.deliveryState).toBe('failed');
    ids.Untrusted = (await byLabel('Untrusted'))!.id;
    await openApp(page, lab, 'inspector');
    await rowOf(page, 'Untrusted').click();
    const hook = timeline(page, `${selfSigned.url}/hook`);
    await hook.getByTestId('attempt').first().locator('summary').click();
    const timing = hook.getByTestId('attempt').first().getByTestId('attempt-timing');
    await expect(timing).toHaveAttribute('data-measured', 'true');
    await expect(timing).toContainText(/connect \d[\d.]* ms/);
    await expect(timing).toContainText(/TLS failed after \d[\d.]* ms/);
    await expect(timing).toContainText('first byte —');
    expect(selfSigned.requests).toHaveLength(0);
  } finally {
    await selfSigned.close();
  }
});
