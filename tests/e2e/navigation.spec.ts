import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, ownLab, ownReceivers, test } from './lab-fixture';
import { openApp } from './ui-steps';

// Issue 26, navigation: one unsaved-changes guard for every way of leaving an edit (the sidebar, the
// palette, an address change, a call switch in the inspector, a reload), a permalink per call
// (#/inspector/<id>), Compose's link to the call it just sent, and no empty state under an error.
// Its own lab: the calls counted and paged here are only this spec's.

const lab = ownLab();
const receivers = ownReceivers();

// docs/ui.md's screenshots of these, refreshed only on request like the other specs'.
const SHOTS = resolve(__dirname, process.env.UPDATE_SCREENSHOTS ? '../../docs/screenshots' : '../../test-results/screenshots');
mkdirSync(SHOTS, { recursive: true });

interface Source {
  id: string;
  name: string;
  writeKey: string;
}
interface Summary {
  id: number;
  label: string | null;
  messageId: string | null;
}

async function sourceTo(name: string, url: string): Promise<Source> {
  const source = await lab.api<Source>('POST', '/sources', { name });
  await lab.api('PATCH', `/sources/${source.id}`, { webhooks: { enabled: true, urls: [{ url, headers: {} }] } });
  return source;
}

/** `events` track calls in one batch; their ids, oldest first. */
async function sendCalls(source: Source, events: string[]): Promise<number[]> {
  const res = await fetch(`${lab.collectorUrl}/v1/batch`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ batch: events.map((event) => ({ type: 'track', userId: 'nav', event })) }),
  });
  expect(res.status).toBe(200);
  const ids: number[] = [];
  for (const event of events) {
    await expect.poll(async () => (await lab.api<{ items: Summary[] }>('GET', `/messages?q=${encodeURIComponent(event)}&limit=5`)).items.find((c) => c.label === event)?.id).toBeDefined();
    const page = await lab.api<{ items: Summary[] }>('GET', `/messages?q=${encodeURIComponent(event)}&limit=5`);
    ids.push(page.items.find((c) => c.label === event)!.id);
  }
  return ids;
}

/** Whether a reload or a closed tab would be asked about now: the page's beforeunload handlers cancel it. */
const unloadAsks = (page: Page) => page.evaluate(() => !window.dispatchEvent(new Event('beforeunload', { cancelable: true })));

test('destinations: the sidebar, the palette and an address change ask before unsaved edits are lost; a reload asks only while they exist', async ({ page }) => {
  await sourceTo('guarded', `${receivers.ok.url}/guarded`);
  await openApp(page, lab, 'destinations');
  await page.getByTestId('source-item').filter({ hasText: 'guarded' }).click();
  await expect(page.getByTestId('source-panel').locator('h2')).toHaveText('guarded');
  expect(await unloadAsks(page)).toBe(false);

  const edited = `${receivers.ok.url}/edited-not-saved`;
  await page.getByTestId('wh-url-0').fill(edited);
  await expect.poll(() => unloadAsks(page)).toBe(true);

  // The sidebar: asked in the app; the address stays; Keep editing keeps the edit.
  await page.getByTestId('nav-compose').click();
  const dialog = page.getByTestId('leave-dialog');
  await expect(dialog).toContainText('Changes not saved yet: the Webhooks settings of guarded.');
  await expect(page).toHaveURL(/#\/destinations$/);
  await expect(dialog.getByTestId('leave-keep')).toBeFocused();
  await page.screenshot({ path: `${SHOTS}/unsaved-changes.png` });
  await page.getByTestId('leave-keep').click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('screen-destinations')).toBeVisible();
  await expect(page.getByTestId('wh-url-0')).toHaveValue(edited);

  // The palette: asked; Esc keeps editing.
  await page.keyboard.press('ControlOrMeta+K');
  await page.getByTestId('palette-input').fill('load');
  await page.keyboard.press('Enter');
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('wh-url-0')).toHaveValue(edited);
  await expect(page).toHaveURL(/#\/destinations$/);

  // A new source opens in place of this one: asked too; Keep editing creates nothing.
  await page.getByTestId('new-source-name').fill('guarded-2');
  await page.getByTestId('create-source').click();
  await expect(dialog).toBeVisible();
  await page.getByTestId('leave-keep').click();
  await expect(page.getByTestId('wh-url-0')).toHaveValue(edited);
  expect((await lab.api<Source[]>('GET', '/sources')).map((x) => x.name)).not.toContain('guarded-2');

  // Any address change (a typed one, Back): asked; Discard goes there and drops the edit.
  await page.evaluate(() => (location.hash = '#/load'));
  await expect(dialog).toBeVisible();
  await expect(page).toHaveURL(/#\/destinations$/);
  await page.getByTestId('leave-discard').click();
  await expect(page.getByTestId('screen-load')).toBeVisible();
  await expect(page).toHaveURL(/#\/load$/);
  expect(await unloadAsks(page)).toBe(false);
  await page.getByTestId('nav-destinations').click();
  await expect(page.getByTestId('wh-url-0')).toHaveValue(`${receivers.ok.url}/guarded`);

  // A real reload with an edit: the browser's own prompt (the only one it allows there).
  await page.getByTestId('wh-url-0').fill(edited);
  await expect.poll(() => unloadAsks(page)).toBe(true);
  const prompt = page.waitForEvent('dialog');
  const reloaded = page.reload();
  const d = await prompt;
  expect(d.type()).toBe('beforeunload');
  await d.accept();
  await reloaded;
  await expect(page.getByTestId('screen-destinations')).toBeVisible();
});

test('a mock receiver, an audience and a plan rule being edited ask before they are left; saved, they do not', async ({ page }) => {
  await lab.api('POST', '/tracking-plans', { name: 'Guard plan', rules: [{ type: 'TRACK', key: 'Guarded', version: 1, jsonSchema: { type: 'object' } }] });
  const dialog = page.getByTestId('leave-dialog');
  const leaveAsks = async (what: string) => {
    await page.getByTestId('nav-compose').click();
    await expect(dialog).toContainText(`Changes not saved yet: ${what}.`);
    await page.getByTestId('leave-keep').click();
    await expect(dialog).toHaveCount(0);
  };

  await openApp(page, lab, 'receivers');
  await page.getByTestId('new-receiver').click();
  await page.getByTestId('rf-name').fill('guarded-rx');
  await leaveAsks('a new mock receiver');
  await expect(page.getByTestId('rf-name')).toHaveValue('guarded-rx');
  await page.getByTestId('nav-compose').click();
  await page.getByTestId('leave-discard').click();
  await expect(page.getByTestId('screen-compose')).toBeVisible();

  // An edited receiver, and another one picked in the list: asked too; Keep editing keeps the form.
  await lab.api('POST', '/receivers', { name: 'guard-a', path: '/guard-a' });
  await lab.api('POST', '/receivers', { name: 'guard-b', path: '/guard-b' });
  await page.getByTestId('nav-receivers').click();
  await page.getByTestId('receiver-row').filter({ hasText: 'guard-a' }).click();
  await expect(page.getByTestId('receiver-panel').locator('h2')).toHaveText('guard-a');
  await page.getByTestId('edit-receiver').click();
  await page.getByTestId('rf-name').fill('guard-a-renamed');
  await page.getByTestId('receiver-row').filter({ hasText: 'guard-b' }).click();
  await expect(dialog).toContainText('Changes not saved yet: the mock receiver guard-a.');
  await page.getByTestId('leave-keep').click();
  await expect(page.getByTestId('rf-name')).toHaveValue('guard-a-renamed');
  await page.getByTestId('receiver-row').filter({ hasText: 'guard-b' }).click();
  await page.getByTestId('leave-discard').click();
  await expect(page.getByTestId('receiver-panel').locator('h2')).toHaveText('guard-b');

  await page.getByTestId('nav-audiences').click();
  await page.getByTestId('new-audience').click();
  await page.getByTestId('aud-name').fill('Guarded users');
  await leaveAsks('a new audience');
  await expect(page.getByTestId('aud-name')).toHaveValue('Guarded users');
  await page.getByTestId('nav-compose').click();
  await page.getByTestId('leave-discard').click();
  await expect(page.getByTestId('screen-compose')).toBeVisible();

  await page.getByTestId('nav-plans').click();
  const rule = page.locator('[data-testid="plan-card"][data-name="Guard plan"]');
  await rule.getByTestId('rule-edit').click();
  await expect(rule.getByTestId('rule-schema')).toBeVisible();
  // Opened and not changed: nothing to lose.
  await page.getByTestId('nav-compose').click();
  await expect(page.getByTestId('screen-compose')).toBeVisible();
  await page.getByTestId('nav-plans').click();
  await rule.getByTestId('rule-edit').click();
  await rule.getByTestId('rule-schema').fill('{ "type": "object", "required": ["properties"] }');
  await leaveAsks('the JSON Schema of TRACK "Guarded" in Guard plan');
  await rule.getByTestId('rule-save').click();
  await expect(rule.getByTestId('rule-schema')).toHaveCount(0);
  await page.getByTestId('nav-compose').click();
  await expect(page.getByTestId('screen-compose')).toBeVisible();
  await expect(dialog).toHaveCount(0);
});

test('inspector: ↓ and a click on another call ask while an Edit & replay body is edited', async ({ page }) => {
  const source = await sourceTo('switch', `${receivers.ok.url}/switch`);
  const [older, newer] = await sendCalls(source, ['Switch One', 'Switch Two']);
  await openApp(page, lab, 'inspector');
  await page.locator(`[data-testid="call-row"][data-id="${newer}"]`).click();
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(newer));
  await expect(page).toHaveURL(new RegExp(`#/inspector/${newer}$`));

  // Open, not edited: ↓ moves on without asking.
  await page.getByTestId('edit-replay').first().click();
  await expect(page.getByTestId('edit-replay-panel')).toBeVisible();
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(older));
  await expect(page.getByTestId('leave-dialog')).toHaveCount(0);

  // Edited: ↓ asks, and Keep editing stays on the call with the edit.
  await page.getByTestId('edit-replay').first().click();
  const editor = page.getByTestId('edit-replay-body').locator('.cm-content');
  await editor.click();
  await page.keyboard.press('ControlOrMeta+End');
  await page.keyboard.insertText(' ');
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('ArrowUp');
  await expect(page.getByTestId('leave-dialog')).toContainText(`Changes not saved yet: the edited body of call #${older}.`);
  // The dialog has the keys: another ↑ does not move the inspector behind it.
  await page.keyboard.press('ArrowUp');
  await page.getByTestId('leave-keep').click();
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(older));
  await expect(page.getByTestId('edit-replay-panel')).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`#/inspector/${older}$`));

  // A click on another row: asked; Discard opens it.
  await page.locator(`[data-testid="call-row"][data-id="${newer}"]`).click();
  await expect(page.getByTestId('leave-dialog')).toBeVisible();
  await page.getByTestId('leave-discard').click();
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(newer));
  await expect(page.getByTestId('edit-replay-panel')).toHaveCount(0);
  await expect(page).toHaveURL(new RegExp(`#/inspector/${newer}$`));
});

test('a permalink per call: selecting replaces the address, a reload shows the same call, one past the first page opens, a missing one says so', async ({ page, consoleGuard }) => {
  // The missing call's 404, asked on purpose at the end.
  consoleGuard.allow(/status of 404/);
  const source = await sourceTo('permalink', `${receivers.ok.url}/permalink`);
  // More than the first page (100): the oldest is not in the list the inspector loads.
  const events = Array.from({ length: 105 }, (_, i) => `Permalink ${i}`);
  const res = await fetch(`${lab.collectorUrl}/v1/batch`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ batch: events.map((event) => ({ type: 'track', userId: 'perma', event })) }),
  });
  expect(res.status).toBe(200);
  let oldest = 0;
  await expect
    .poll(async () => {
      const found = (await lab.api<{ items: Summary[] }>('GET', '/messages?q=Permalink%200&limit=100')).items.find((c) => c.label === 'Permalink 0');
      oldest = found?.id ?? 0;
      return oldest;
    })
    .toBeGreaterThan(0);

  await openApp(page, lab, 'inspector');
  const rows = page.getByTestId('call-row');
  await rows.first().click();
  const first = Number(await rows.first().getAttribute('data-id'));
  await expect(page).toHaveURL(new RegExp(`#/inspector/${first}$`));
  // Moving through calls replaces the address: Back is not filled with every call seen.
  const length = await page.evaluate(() => history.length);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('call-detail')).not.toHaveAttribute('data-call-id', String(first));
  const shown = await page.getByTestId('call-detail').getAttribute('data-call-id');
  await expect(page).toHaveURL(new RegExp(`#/inspector/${shown}$`));
  expect(await page.evaluate(() => history.length)).toBe(length);

  // A reload on the permalink shows the same call.
  await page.reload();
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(shown));

  // A call past the first page, by its address (a link in a bug report, in check's output).
  await page.evaluate((id) => (location.hash = `#/inspector/${id}`), oldest);
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(oldest));
  await expect(page.getByTestId('call-detail')).toContainText('Permalink 0');
  expect(await page.locator(`[data-testid="call-row"][data-id="${oldest}"]`).count()).toBe(0);
  await page.reload();
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(oldest));

  // A call that does not exist: said plainly.
  await page.evaluate(() => (location.hash = '#/inspector/99999999'));
  await expect(page.getByTestId('detail-error')).toContainText('Call #99999999 does not exist in this lab');
});

test('compose: "see it in the Inspector" opens the call just sent', async ({ page }) => {
  await sourceTo('compose-link', `${receivers.ok.url}/compose-link`);
  await openApp(page, lab, 'compose');
  await page.getByTestId('compose-source').selectOption({ label: 'compose-link' });
  await page.getByTestId('field-event').fill('Compose Link');
  await page.getByTestId('send-button').click();
  await expect(page.getByTestId('send-result')).toContainText('Sent');
  const messageId = (await page.getByTestId('send-result').locator('code').textContent())!;
  await page.getByTestId('open-inspector').click();
  await expect(page.getByTestId('call-detail')).toBeVisible();
  const call = (await lab.api<{ items: Summary[] }>('GET', `/messages?q=${encodeURIComponent(messageId)}`)).items.find((c) => c.messageId === messageId)!;
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', String(call.id));
  await expect(page).toHaveURL(new RegExp(`#/inspector/${call.id}$`));
});

test('a wrong token: each screen shows the error and how to recover, never its empty state under it', async ({ page, consoleGuard }) => {
  consoleGuard.allow(/status of 401/);
  await page.goto(`${lab.apiBase}/?token=not-the-token#/inspector`);
  await expect(page.getByTestId('calls-error')).toContainText('Not authorized');
  await expect(page.getByTestId('calls-error')).toContainText('Reopen the "ui:" address');
  await expect(page.getByTestId('inspector-empty')).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/load-error.png` });
  await page.getByTestId('nav-destinations').click();
  await expect(page.getByTestId('sources-error')).toContainText('Not authorized');
  await expect(page.getByTestId('destinations-empty')).toHaveCount(0);
  await expect(page.getByTestId('first-run')).toHaveCount(0);
  await page.getByTestId('nav-compose').click();
  await expect(page.getByTestId('compose-sources-error')).toContainText('Not authorized');
  await expect(page.getByTestId('compose-empty')).toHaveCount(0);
  await page.getByTestId('nav-receivers').click();
  await expect(page.getByTestId('receivers-error')).toContainText('Not authorized');
  await expect(page.getByTestId('receivers-empty')).toHaveCount(0);
  await page.getByTestId('nav-plans').click();
  await expect(page.getByTestId('plans-load-error')).toContainText('Not authorized');
  await expect(page.getByTestId('plans-empty')).toHaveCount(0);
});
