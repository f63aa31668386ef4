import { expect, ownLab, test } from './lab-fixture';
import { openApp } from './ui-steps';

// Issue 26 on the screens: a config import lists what it adjusted (a mock receiver named in the file,
// now this lab's URL) and what it doubts (a URL on this machine at a port the lab does not own), in
// Settings where the import happens; deleting a mock receiver a source sends to says which sources
// and what removing its URL does to them, and a receiver that is a mapping's URL is not deleted.

test.describe.configure({ mode: 'serial' });
const lab = ownLab();

interface ReceiverView {
  id: string;
  name: string;
  url: string;
}
interface SourceView {
  id: string;
  name: string;
  webhooks: { enabled: boolean; urls: { url: string }[] };
}

test('Settings, Import config: a named mock receiver gets this lab\'s URL, and a URL at a port the lab does not own is listed to check', async ({ page }) => {
  await openApp(page, lab, 'settings');
  const config = {
    mockReceivers: [{ name: 'hook', path: '/hook' }],
    sources: [{ name: 'imported', webhooks: { enabled: true, urls: [{ mockReceiver: 'hook' }, { url: 'http://127.0.0.1:1/elsewhere' }] } }],
  };
  await page.getByTestId('config-file').setInputFiles({ name: 'from-lab-a.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(config)) });
  // The import is done once its notes show; only then does the lab have the receiver to read.
  await expect(page.getByTestId('config-import-notes')).toBeVisible();
  const hook = (await lab.api<ReceiverView[]>('GET', '/receivers')).find((r) => r.name === 'hook');
  expect(hook, 'the imported mock receiver "hook"').toBeDefined();
  await expect(page.getByTestId('config-import-notes')).toContainText(`sources[0].webhooks.urls[0].mockReceiver: mock receiver "hook" is ${hook!.url} in this lab`);
  const warnings = page.getByTestId('config-import-warnings');
  await expect(warnings).toContainText('sources[0].webhooks.urls[1].url');
  await expect(warnings).toContainText('http://127.0.0.1:1/elsewhere is on this machine at port 1, which this lab does not listen on');
  await expect(page.getByTestId('toast-info').filter({ hasText: '1 URL(s) to check' })).toBeVisible();
  const source = (await lab.api<SourceView[]>('GET', '/sources')).find((s) => s.name === 'imported');
  expect(source!.webhooks.urls.map((u) => u.url)).toEqual([hook!.url, 'http://127.0.0.1:1/elsewhere']);
  await expect(page.getByTestId('config-import-error')).toHaveCount(0);

  // A clean import clears the list.
  await page.getByTestId('config-file').setInputFiles({ name: 'clean.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ settings: { timeScale: 1 } })) });
  await expect(page.getByTestId('config-import-warnings')).toHaveCount(0);
  await expect(page.getByTestId('config-import-notes')).toHaveCount(0);
});

test('Mock receivers, Delete: the confirm names the sources using it; confirmed, its URL leaves them', async ({ page }) => {
  const rx = await lab.api<ReceiverView>('POST', '/receivers', { name: 'shared-rx', path: '/shared-rx' });
  const mapped = await lab.api<ReceiverView>('POST', '/receivers', { name: 'mapped-rx', path: '/mapped-rx' });
  await lab.api('POST', '/sources', { name: 'only-rx', webhooks: { enabled: true, urls: [{ url: rx.url }] } });
  await lab.api('POST', '/sources', { name: 'two-urls', webhooks: { enabled: true, urls: [{ url: 'https://example.com/hook' }, { url: rx.url }] } });
  await lab.api('POST', '/sources', { name: 'acts', webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'orders', url: mapped.url }] } });
  await openApp(page, lab, 'compose');
  await page.getByTestId('nav-receivers').click();
  const t = (id: string) => page.getByTestId(id);

  // A mapping's URL: no delete, only the way out.
  await t('receiver-row').filter({ hasText: 'mapped-rx' }).click();
  await t('delete-receiver').click();
  await expect(t('delete-receiver-uses')).toHaveText('It is the URL of mapping "orders" of acts: give that mapping another URL in Destinations first.');
  await expect(t('delete-receiver-detach')).toHaveCount(0);
  await expect(t('delete-receiver-confirm')).toHaveCount(0);
  await t('delete-receiver-cancel').click();

  await t('receiver-row').filter({ hasText: 'shared-rx' }).click();
  await t('delete-receiver').click();
  await expect(t('delete-receiver-uses')).toHaveText('Used by only-rx (its only URL: its Webhooks will be turned off), two-urls. Its URL is removed from them.');
  await expect(t('delete-receiver-detach')).toHaveText('Delete and remove its URL');
  await t('delete-receiver-detach').click();
  await expect(t('receiver-row').filter({ hasText: 'shared-rx' })).toHaveCount(0);
  await expect(t('toast-info').filter({ hasText: 'Receiver "shared-rx" deleted; its URL was removed from only-rx, two-urls' })).toBeVisible();
  const sources = await lab.api<SourceView[]>('GET', '/sources');
  expect(sources.find((s) => s.name === 'only-rx')!.webhooks).toMatchObject({ enabled: false, urls: [] });
  expect(sources.find((s) => s.name === 'two-urls')!.webhooks.urls.map((u) => u.url)).toEqual(['https://example.com/hook']);
  expect((await lab.api<ReceiverView[]>('GET', '/receivers')).map((r) => r.name)).toContain('mapped-rx');
});
