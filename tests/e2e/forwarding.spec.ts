import type { ServerResponse } from 'node:http';
import { startReceiver } from '../helpers/receiver';
import { expect, ownLab, test } from './lab-fixture';
import { openApp, row, timeline, useSourceInCompose } from './ui-steps';

// Issue 26, "says something untrue": (1) a call no Actions mapping matched is explained by the
// engine's forwarding reason, in the inspector and in Compose with the same sentence; (2) in flight,
// a URL that already answered shows its attempt and the count at once, while the other URL is out.
const lab = ownLab();

test.describe.configure({ mode: 'serial' });

async function track(writeKey: string, body: Record<string, unknown>) {
  const res = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

const NO_MATCH = 'Not forwarded: no Actions mapping matched it. Not matching: orders (type = "track" and event = "Order Completed").';

test('a call no Actions mapping matched: the inspector and Compose say so, naming the mapping and its trigger', async ({ page }) => {
  const sink = await lab.api<{ url: string }>('POST', '/receivers', { name: 'fwd-sink', path: '/fwd-sink' });
  const source = await lab.api<{ writeKey: string }>('POST', '/sources', {
    name: 'fwd-actions',
    webhooks: {
      enabled: true,
      mode: 'actions',
      urls: [],
      mappings: [{ name: 'orders', trigger: { type: 'track', event: 'Order Completed' }, url: sink.url, method: 'POST', headers: {} }],
    },
  });
  await track(source.writeKey, { userId: 'u1', event: 'Page Viewed' });
  await openApp(page, lab, 'inspector');
  // The list's chip cannot say which reason, but no longer names only the two it used to.
  await expect(row(page, 'Page Viewed').locator('.chip').first()).toHaveAttribute('title', /no Actions mapping matched it/);
  await row(page, 'Page Viewed').click();
  const reason = page.getByTestId('forwarding-reason');
  await expect(reason).toHaveText(NO_MATCH);
  await expect(reason).toHaveAttribute('data-reason', 'no_mapping_matched');
  await expect(page.getByTestId('call-detail')).not.toContainText('Webhooks disabled');

  await useSourceInCompose(page, 'fwd-actions');
  await page.getByTestId('field-userId').fill('u1');
  await page.getByTestId('field-event').fill('Page Viewed');
  await expect(page.getByTestId('preview-no-request')).toHaveText(NO_MATCH);
});

test('in flight: the fast URL shows its attempt and the count while the slow one is still out', async ({ page }) => {
  // A timeout longer than the test: the round stays out until the slow receiver is let answer.
  await lab.api('PATCH', '/settings', { retrySchedule: { preset: 'custom', delaysMs: [60_000], jitter: 0, windowMs: 3_600_000, timeoutMs: 60_000 } });
  const fast = await lab.api<{ url: string }>('POST', '/receivers', { name: 'fast', path: '/fast' });
  // The slow URL holds its request until the test lets it go (not a fixed delay, which a busy machine
  // could outrun before the in-flight checks below are done).
  const held: ServerResponse[] = [];
  const slowReceiver = await startReceiver((_req, res) => void held.push(res));
  const slow = { url: `${slowReceiver.url}/slow` };
  try {
    const source = await lab.api<{ writeKey: string }>('POST', '/sources', {
      name: 'fwd-two',
      webhooks: { enabled: true, urls: [{ url: fast.url, headers: {} }, { url: slow.url, headers: {} }] },
    });
    await openApp(page, lab, 'inspector');
    await track(source.writeKey, { userId: 'u1', event: 'Fast and slow' });
    await row(page, 'Fast and slow').click();

    const fastLine = timeline(page, fast.url);
    const slowLine = timeline(page, slow.url);
    await expect(slowLine.getByTestId('url-state')).toHaveAttribute('data-state', 'in_flight');
    await expect(fastLine.getByTestId('url-state')).toHaveAttribute('data-state', 'delivered');
    await expect(fastLine).toHaveAttribute('data-attempts', '1');
    await expect(fastLine).toContainText('1 attempt');
    await expect(fastLine).not.toContainText('No attempt yet');
    await expect(page.getByTestId('delivery-attempts')).toHaveAttribute('data-count', '1');
    // Still out while all that shows: the slow receiver has the request and has not answered.
    await slowReceiver.waitForRequests(1);
    expect(held).toHaveLength(1);
    await expect(slowLine.getByTestId('url-state')).toHaveAttribute('data-state', 'in_flight');
    await expect(slowLine).toHaveAttribute('data-attempts', '0');

    // When the round ends it is recorded: two attempts, counted once each.
    for (const res of held.splice(0)) res.writeHead(200).end('late');
    await expect(page.getByTestId('delivery-attempts')).toHaveAttribute('data-count', '2');
    await expect(fastLine).toHaveAttribute('data-attempts', '1');
    await expect(slowLine).toHaveAttribute('data-attempts', '1');
    await expect(slowLine.getByTestId('url-state')).toHaveAttribute('data-state', 'delivered');
  } finally {
    for (const res of held) res.destroy();
    await slowReceiver.close();
  }
});
