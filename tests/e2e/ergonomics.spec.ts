import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, ownLab, test } from './lab-fixture';
import { openApp } from './ui-steps';

// Issue 14, Ergonomics: first run in one click, the command palette, the `?` help, the theme
// remembered across a reload without a flash, and editing an audience. A lab of its own, empty at
// the start (the first-run offer shows only on an empty lab).

// docs/ui.md's screenshots of these, refreshed only on request like the other specs'.
const SHOTS = resolve(__dirname, process.env.UPDATE_SCREENSHOTS ? '../../docs/screenshots' : '../../test-results/screenshots');
mkdirSync(SHOTS, { recursive: true });

test.describe.configure({ mode: 'serial' });

const lab = ownLab();


const DARK_BG = 'rgb(22, 24, 29)';
const LIGHT_BG = 'rgb(255, 255, 255)';

test('first run: from an empty lab, one click gives a delivered, signed call open in the inspector', async ({ page }) => {
  expect(await lab.api<unknown[]>('GET', '/sources')).toEqual([]);
  await openApp(page, lab, 'compose');
  await expect(page.getByTestId('first-run')).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/first-run.png` });
  await page.getByTestId('demo-try').click();

  await expect(page.getByTestId('screen-inspector')).toBeVisible();
  const detail = page.getByTestId('call-detail');
  await expect(detail).toBeVisible();
  await expect(detail.getByTestId('url-state').first()).toHaveText('delivered · HTTP 200');
  await expect(detail.getByTestId('attempt-signature').first()).toHaveText(/^[0-9a-f]{40}$/);

  const demo = await lab.api<{ receiver: { id: string }; callIds: number[] }>('GET', '/demo');
  expect(page.url()).toContain('#/inspector');
  await expect(page.getByTestId('detail-message-id')).toBeVisible();
  const requests = await lab.api<{ signature: { state: string } }[]>('GET', `/receivers/${demo.receiver.id}/requests`);
  expect(requests.map((r) => r.signature.state)).toEqual(['valid']);
  await expect(page.getByTestId('demo-bar')).toContainText('Demo source');
  await expect(page.getByTestId('first-run')).toHaveCount(0);
});

test('command palette: Ctrl+K, type, Enter navigates; arrows move; Esc closes; actions run', async ({ page }) => {
  await openApp(page, lab, 'compose');
  await page.keyboard.press('Control+k');
  await expect(page.getByTestId('palette-input')).toBeFocused();
  await page.keyboard.type('dest');
  await expect(page.getByTestId('palette-item').first()).toHaveAttribute('data-id', 'go-destinations');
  await page.screenshot({ path: `${SHOTS}/command-palette.png` });
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('palette')).toHaveCount(0);
  await expect(page.getByTestId('screen-destinations')).toBeVisible();
  // Focus lands on the screen's heading, not the page's body (issue 40).
  await expect(page.getByRole('heading', { level: 1, name: 'Sources' })).toBeFocused();

  await page.keyboard.press('Control+k');
  await page.keyboard.type('settings');
  const items = page.getByTestId('palette-item');
  await expect(items.first()).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowUp'); // wraps to the last match
  const count = await items.count();
  await expect(items.nth(count - 1)).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowDown');
  await expect(items.first()).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('palette')).toHaveCount(0);
  await expect(page.getByTestId('screen-destinations')).toBeVisible();
  // Closed without a command: focus goes back where it was.
  await expect(page.getByRole('heading', { level: 1, name: 'Sources' })).toBeFocused();

  // An action: send a test call, opened in the inspector.
  await page.keyboard.press('Control+k');
  await page.keyboard.type('send test');
  await expect(items.first()).toHaveAttribute('data-id', 'send-test-call');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('screen-inspector')).toBeVisible();
  await expect(page.getByTestId('call-detail')).toContainText('Order Completed');
  await expect.poll(async () => (await lab.api<{ items: unknown[] }>('GET', '/messages')).items.length).toBe(2);
  await expect(page.getByTestId('call-detail').locator('h2')).toBeFocused();
  // Replay keeps focus on its button while it runs and after (it fell to the page's body).
  await page.getByTestId('replay-button').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('toast-info').last()).toContainText('Replayed: 1 new attempt');
  await expect(page.getByTestId('replay-button')).toBeFocused();
  // Palette to the inspector: its current row takes focus, where its arrow keys work.
  await page.keyboard.press('Control+k');
  await page.keyboard.type('compose');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: 'Compose' })).toBeFocused();
  await page.keyboard.press('Control+k');
  await page.keyboard.type('inspector');
  await page.keyboard.press('Enter');
  await expect(page.locator('[data-testid="call-row"][tabindex="0"]')).toBeFocused();

  // Nothing matches: said so, and Enter does nothing.
  await page.keyboard.press('Control+k');
  await page.keyboard.type('qqqzzz');
  await expect(page.getByTestId('palette-empty')).toBeVisible();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('palette')).toBeVisible();
  await page.keyboard.press('Escape');
});

test('? shows the shortcuts (not while typing); Esc closes', async ({ page }) => {
  await openApp(page, lab, 'destinations');
  await page.getByTestId('new-source-name').focus();
  await page.keyboard.type('a?b');
  await expect(page.getByTestId('new-source-name')).toHaveValue('a?b');
  await expect(page.getByTestId('help-overlay')).toHaveCount(0);
  await page.getByTestId('new-source-name').fill('');
  await page.getByTestId('new-source-name').blur();
  await page.keyboard.press('?');
  const help = page.getByTestId('help-overlay');
  await expect(help).toBeVisible();
  await expect(help.getByTestId('help-shortcut').filter({ hasText: 'command palette' })).toContainText('Ctrl+K');
  await expect(help.getByTestId('help-group').first()).toHaveAttribute('data-scope', 'Anywhere');
  await page.screenshot({ path: `${SHOTS}/shortcuts-help.png` });
  await page.keyboard.press('Escape');
  await expect(help).toHaveCount(0);
  // The palette opens it too.
  await page.keyboard.press('Control+k');
  await page.keyboard.type('shortcuts');
  await page.keyboard.press('Enter');
  await expect(help).toBeVisible();
  await page.keyboard.press('Escape');
});

test('theme: chosen in Settings, remembered across a reload, applied before the app runs (no flash)', async ({ page }) => {
  await openApp(page, lab, 'settings');
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(await bg()).toBe(LIGHT_BG); // the system's (Playwright: light)
  await page.getByTestId('set-theme').selectOption('dark');
  await expect.poll(bg).toBe(DARK_BG);

  // Reload with the app bundle held back: the page is already dark before any of the app runs.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let heldBundle = false;
  await page.route(/\/assets\/index-[^/]+\.js$/, async (route) => {
    heldBundle = true;
    await held;
    await route.continue();
  });
  await page.reload({ waitUntil: 'commit' });
  await expect.poll(() => heldBundle).toBe(true);
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect.poll(bg).toBe(DARK_BG);
  expect(await page.evaluate(() => document.querySelector('[data-testid="screen-settings"]'))).toBeNull();
  release();
  await expect(page.getByTestId('set-theme')).toHaveValue('dark');
  await page.unroute(/\/assets\/index-[^/]+\.js$/);

  // The system's scheme again when following it: dark here when the system is dark.
  await page.getByTestId('set-theme').selectOption('system');
  await expect.poll(bg).toBe(LIGHT_BG);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(bg).toBe(DARK_BG);
  await page.getByTestId('set-theme').selectOption('light');
  await expect.poll(bg).toBe(LIGHT_BG);
  await page.reload();
  await expect(page.getByTestId('set-theme')).toHaveValue('light');
  await expect.poll(bg).toBe(LIGHT_BG);
  await page.getByTestId('set-theme').selectOption('system');
});

test('audiences: edit one, only changed users are sent, and its members are listed', async ({ page }) => {
  const [source] = await lab.api<{ id: string; writeKey: string }[]>('GET', '/sources');
  const identify = async (userId: string, plan: string) => {
    const res = await fetch(`${lab.collectorUrl}/v1/identify`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ userId, traits: { plan } }),
    });
    expect(res.status).toBe(200);
  };
  await identify('ann', 'pro');
  await identify('bob', 'team');
  await lab.api('POST', '/audiences', {
    name: 'Plan members',
    rule: { combine: 'and', conditions: [{ kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' }] },
    sourceIds: [source.id],
  });
  await openApp(page, lab, 'compose');
  await page.getByTestId('nav-audiences').click();
  const row = page.getByTestId('audience-row').filter({ hasText: 'Plan members' });
  await row.getByTestId('audience-members-toggle').click();
  await expect(page.getByTestId('audience-member')).toHaveText([/ann\s*true/]);

  await row.getByTestId('audience-edit').click();
  await expect(page.getByTestId('audience-form')).toHaveAttribute('data-mode', 'edit');
  await page.getByTestId('cond-rule.conditions[0]-value').fill('team');
  await page.getByTestId('aud-save').click();
  await expect(page.getByTestId('audience-form')).toHaveCount(0);
  await expect(row.getByTestId('audience-sync-result')).toContainText('1 entered, 1 exited, 2 identify calls sent');
  await expect(page.getByTestId('audience-member')).toHaveText([/bob\s*true/]);
  await expect(row).toContainText('"team"');
  await page.screenshot({ path: `${SHOTS}/audience-members.png` });
  const calls = await lab.api<{ items: { type: string; userId: string }[] }>('GET', '/messages?type=identify');
  // The two identify calls sent, then the audience's two at creation and edit: ann true, ann false, bob true.
  expect(calls.items.filter((c) => c.userId === 'ann')).toHaveLength(3);
  expect(calls.items.filter((c) => c.userId === 'bob')).toHaveLength(2);
});
