import type { Locator, Page } from '@playwright/test';
import type { Tab } from '../../src/renderer/screens';
import { expect, type Lab } from './lab-fixture';

// UI steps shared by the specs, written the way a user works through the screens.

export async function openApp(page: Page, lab: Lab, screen: Tab = 'compose') {
  await page.goto(lab.uiUrl);
  // The token leaves the address bar once read.
  await expect(page).not.toHaveURL(/token=/);
  await page.getByTestId(`nav-${screen}`).click();
  await expect(page.getByTestId(`screen-${screen}`)).toBeVisible();
  await expect(page.getByTestId('connection')).toHaveText('live');
}

export async function createSource(page: Page, name: string) {
  await page.getByTestId('nav-destinations').click();
  await page.getByTestId('new-source-name').fill(name);
  await page.getByTestId('create-source').click();
  await expect(page.getByTestId('source-panel').locator('h2')).toHaveText(name);
}

export async function configureWebhooks(page: Page, o: { urls: { url: string; headers?: Record<string, string> }[]; secret?: string }) {
  const form = page.getByTestId('webhooks-form');
  for (let i = 0; i < o.urls.length; i++) {
    if ((await page.getByTestId(`wh-url-${i}`).count()) === 0) await page.getByTestId('wh-add-url').click();
    await page.getByTestId(`wh-url-${i}`).fill(o.urls[i].url);
    for (const [k, v] of Object.entries(o.urls[i].headers ?? {})) {
      const editor = page.getByTestId(`wh-headers-${i}`);
      const n = await editor.locator('.header-row').count();
      await page.getByTestId(`wh-headers-${i}-add`).click();
      await page.getByTestId(`wh-headers-${i}-name-${n}`).fill(k);
      await page.getByTestId(`wh-headers-${i}-value-${n}`).fill(v);
    }
  }
  if (o.secret !== undefined) await page.getByTestId('wh-secret').fill(o.secret);
  await form.getByTestId('wh-enabled').check();
  await page.getByTestId('wh-save').click();
}

export async function useSourceInCompose(page: Page, name: string) {
  await page.getByTestId('nav-compose').click();
  const select = page.getByTestId('compose-source');
  await select.selectOption({ label: name });
  await expect(select.locator('option:checked')).toHaveText(name);
}

export async function composeTrack(page: Page, userId: string, event: string) {
  await page.getByTestId('template-select').selectOption('order-completed');
  await page.getByTestId('field-userId').fill(userId);
  await page.getByTestId('field-event').fill(event);
}

export function row(page: Page, label: string): Locator {
  return page.getByTestId('call-row').filter({ has: page.getByTestId('call-label').getByText(label, { exact: true }) });
}

export function timeline(page: Page, url: string): Locator {
  return page.locator(`[data-testid="url-timeline"][data-url="${url}"]`);
}

/**
 * A copy button copied (at least once): its `data-copied` count, which stays, not its "Copied" label,
 * which shows for 1.2 s only and which a check on a slow machine can miss.
 */
export async function expectCopied(button: Locator): Promise<void> {
  await expect(button).toHaveAttribute('data-copied', /^[1-9]\d*$/);
}
