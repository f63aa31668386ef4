import { expect, ownLab, ownReceivers, test } from './lab-fixture';
import { composeTrack, configureWebhooks, createSource, openApp, row, useSourceInCompose } from './ui-steps';

// Issue 22, item 7: a receiver URL's password is masked wherever the UI shows it — in the
// Destinations form except while the field is being edited, the Compose preview and the inspector —
// and it is still what the lab saves and sends (as Basic auth).

const lab = ownLab();
const receivers = ownReceivers();
const PASSWORD = 'e2e-hunter2';

test('a receiver URL with user:password@ shows **** for the password, and is saved and sent whole', async ({ page }) => {
  const host = receivers.ok.url.slice('http://'.length);
  const url = `http://bob:${PASSWORD}@${host}/with-creds`;
  const masked = `http://bob:****@${host}/with-creds`;
  await openApp(page, lab, 'destinations');
  await createSource(page, 'creds');
  await configureWebhooks(page, { urls: [{ url }] });
  await expect(page.getByTestId('toast-info').filter({ hasText: 'Webhooks settings saved' })).toBeVisible();

  const input = page.getByTestId('wh-url-0');
  await expect(input).toHaveValue(masked);
  await input.focus();
  await expect(input).toHaveValue(url);
  await input.blur();
  await expect(input).toHaveValue(masked);
  const [source] = await lab.api<{ webhooks: { urls: { url: string }[] } }[]>('GET', '/sources');
  expect(source.webhooks.urls[0].url).toBe(url);

  await useSourceInCompose(page, 'creds');
  await composeTrack(page, 'e2e_creds', 'Creds Order');
  await expect(page.getByTestId('preview-classic')).toContainText(masked);
  await page.getByTestId('send-button').click();

  await page.getByTestId('nav-inspector').click();
  const r = row(page, 'Creds Order');
  await expect(r).toBeVisible();
  await r.click();
  await expect(page.getByTestId('call-detail')).toContainText(masked);
  // The row and its URL show once the call is stored, before it is sent: the receiver is read only
  // once the detail says the URL answered (else it can be read while the delivery is still out).
  await expect(page.getByTestId('call-detail').getByTestId('url-state').first()).toHaveAttribute('data-state', 'delivered');
  expect(await page.content()).not.toContain(PASSWORD);
  const got = receivers.ok.requests.find((q) => q.url === '/with-creds');
  expect(got?.headers.authorization).toBe(`Basic ${Buffer.from(`bob:${PASSWORD}`).toString('base64')}`);
});
