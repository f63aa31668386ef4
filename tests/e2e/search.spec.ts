import { expect, startLab, test, type Lab } from './lab-fixture';
import { openApp, row } from './ui-steps';

// Issue 14, "search as users expect": the inspector's search finds any part of a call's ids and
// event/name in any case, the same live and after the list is read again from the engine, and the
// "search bodies" checkbox looks inside each call's JSON. Its own server, so nothing reaches the
// other specs.

test.describe.configure({ mode: 'serial' });

let lab: Lab;
let stopLab: () => Promise<void>;
let writeKey: string;

async function send(path: '/v1/track' | '/v1/batch', body: unknown): Promise<void> {
  const res = await fetch(`${lab.collectorUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

test.beforeAll(async () => {
  ({ lab, stop: stopLab } = await startLab());
  ({ writeKey } = await lab.api<{ writeKey: string }>('POST', '/sources', { name: 'search-shop', webhooks: { enabled: false, sharedSecret: '', urls: [] } }));
  await send('/v1/batch', {
    batch: [
      { type: 'track', userId: 'User_42', event: 'Search Signup', properties: { email: 'Alice@Example.com' } },
      { type: 'track', userId: 'u-2', event: 'Search Other', properties: { plan: 'Enterprise' } },
    ],
  });
});
test.afterAll(async () => {
  await stopLab?.();
});


test('a search matches any case, live and when the list is read again; search bodies looks inside the JSON', async ({ page }) => {
  await openApp(page, lab, 'inspector');
  const search = page.getByTestId('filter-search');
  await expect(search).toHaveAttribute('title', /userId.*anonymousId.*messageId.*event\/name.*groupId.*previousId/);
  await expect(row(page, 'Search Signup')).toBeVisible();

  await search.fill('user');
  await expect(row(page, 'Search Other')).toHaveCount(0);
  await expect(row(page, 'Search Signup')).toBeVisible();
  // Arrives live under the search (the merge), then stays when the engine's list replaces it.
  await send('/v1/track', { type: 'track', userId: 'USER_77', event: 'Search Live' });
  await expect(row(page, 'Search Live')).toBeVisible();
  await page.getByTestId('pause-button').click();
  await page.getByTestId('pause-button').click();
  await expect(row(page, 'Search Live')).toBeVisible();
  await expect(row(page, 'Search Signup')).toBeVisible();
  await expect(page.getByTestId('calls-total')).toHaveText('2 calls');

  // A property value: nothing until bodies are searched too; then only its own call of the batch.
  const bodies = page.getByTestId('filter-search-bodies');
  await search.fill('alice@example');
  await expect(page.getByTestId('inspector-empty')).toContainText('No call matches');
  await bodies.check();
  await expect(row(page, 'Search Signup')).toBeVisible();
  await expect(page.getByTestId('call-row')).toHaveCount(1);
  // A new call whose body holds the term: the summary alone cannot tell, the engine places it.
  await send('/v1/track', { type: 'track', userId: 'u-9', event: 'Search Body Live', properties: { contact: 'ALICE@example.org' } });
  await expect(row(page, 'Search Body Live')).toBeVisible();
  await expect(page.getByTestId('calls-total')).toHaveText('2 calls');
  await bodies.uncheck();
  await expect(page.getByTestId('inspector-empty')).toContainText('No call matches');
});
