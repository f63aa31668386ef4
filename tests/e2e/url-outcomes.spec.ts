import type { ServerResponse } from 'node:http';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { expect, startLab, test, type Lab } from './lab-fixture';
import { openApp, row, timeline } from './ui-steps';

// Issue 14, "the inspector never hides a failure": a call one URL delivered while another failed
// reads so in the list and is found by the URL-outcome filter; an attempt still out reads "in flight"
// with its time, live. Its own server and receivers, so nothing here reaches the other specs.

test.describe.configure({ mode: 'serial' });

let lab: Lab;
let stopLab: () => Promise<void>;
let ok: TestReceiver;
let failing: TestReceiver;
let held: TestReceiver;
/** The held receiver's answers: never given, so its attempt runs into the 5 s limit. */
const holding: ServerResponse[] = [];

test.beforeAll(async () => {
  ({ lab, stop: stopLab } = await startLab());
  ok = await startReceiver((_req, res) => void res.writeHead(200).end('ok'));
  failing = await startReceiver((_req, res) => void res.writeHead(500).end('receiver exploded'));
  held = await startReceiver((_req, res) => void holding.push(res));
  // A first retry 30 min away: no call here can change state under a test by a retry.
  await lab.api('PATCH', '/settings', { retrySchedule: { preset: 'custom', delaysMs: [30 * 60_000], jitter: 0, windowMs: 4 * 3600_000 } });
});
test.afterAll(async () => {
  for (const res of holding.splice(0)) res.destroy();
  await Promise.all([ok?.close(), failing?.close(), held?.close()]);
  await stopLab?.();
});


/** A source sending to these URLs, and a call to it through the collector. */
async function sendTo(name: string, urls: string[], event: string): Promise<void> {
  const source = await lab.api<{ id: string; writeKey: string }>('POST', '/sources', { name });
  await lab.api('PATCH', `/sources/${source.id}`, { webhooks: { enabled: true, urls: urls.map((url) => ({ url, headers: {} })) } });
  const res = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
    body: JSON.stringify({ userId: 'e2e_urls', event }),
  });
  expect(res.status).toBe(200);
}

test('a call delivered by one URL while another failed says so, and the URL-outcome filter finds it', async ({ page }) => {
  const urls = [`${ok.url}/a`, `${failing.url}/b`];
  await sendTo('mixed-outcome', urls, 'E2E Mixed');
  await openApp(page, lab, 'inspector');
  const r = row(page, 'E2E Mixed');
  const chip = r.locator('.chip');
  await expect(chip).toHaveText('delivered · 1 of 2 URLs failed');
  await expect(chip).toHaveAttribute('data-status', 'delivered');
  // Not plain green.
  await expect(chip).toHaveClass(/chip-warn/);

  await page.getByTestId('filter-url-state').selectOption('failed');
  await expect(r).toBeVisible();
  await page.getByTestId('filter-url-state').selectOption('retrying');
  await expect(r).toHaveCount(0);
  await expect(page.getByTestId('inspector-empty')).toContainText('No call matches');
  await page.getByTestId('filter-url-state').selectOption('');
  await expect(r).toBeVisible();

  await r.click();
  await expect(timeline(page, urls[0]).getByTestId('url-state')).toHaveText('delivered · HTTP 200');
  await expect(timeline(page, urls[1]).getByTestId('url-state')).toHaveText('failed · HTTP 500');
  const why = timeline(page, urls[1]).getByTestId('attempt-explain');
  await expect(why).toContainText('Not retried: another URL of this call answered 2xx in the same round');
  await expect(why).not.toContainText('Retried on the schedule');
});

test('an attempt still out reads "in flight" with its time, live; after the 5 s limit the call reads delivered with that URL failed', async ({ page }) => {
  const urls = [`${ok.url}/fast`, `${held.url}/held`];
  await openApp(page, lab, 'inspector');
  await sendTo('in-flight', urls, 'E2E In Flight');
  const r = row(page, 'E2E In Flight');
  const chip = r.locator('.chip');
  // URL 1 answered at once; URL 2 holds its answer: the call is in flight, its time counting.
  await expect(chip).toHaveAttribute('data-status', 'in_flight');
  await expect(chip).toHaveText(/^in flight \ds$/);
  const first = await chip.textContent();
  await expect(chip).not.toHaveText(first!);
  await expect(chip).toHaveText(/^in flight [1-5]s$/);

  await r.click();
  await expect(timeline(page, urls[0]).getByTestId('url-state')).toHaveText('delivered · HTTP 200');
  await expect(timeline(page, urls[1]).getByTestId('url-state')).toHaveText(/^in flight \ds$/);
  await expect(timeline(page, urls[1]).getByTestId('url-in-flight')).toBeVisible();

  // The receiver never answers: at 5 s the attempt times out, and URL 1 delivered the call.
  await expect(chip).toHaveText('delivered · 1 of 2 URLs failed', { timeout: 15_000 });
  await expect(timeline(page, urls[1]).getByTestId('url-state')).toHaveText('failed');
  const why = timeline(page, urls[1]).getByTestId('attempt-explain');
  await expect(why).toContainText('No answer within 5 s');
  await expect(why).toContainText('Not retried: another URL of this call answered 2xx in the same round');
  await expect(why).not.toContainText('Retried on the schedule');

  await page.getByTestId('filter-url-state').selectOption('in_flight');
  await expect(page.getByTestId('inspector-empty')).toContainText('No call matches');
  await page.getByTestId('filter-url-state').selectOption('failed');
  await expect(r).toBeVisible();
});
