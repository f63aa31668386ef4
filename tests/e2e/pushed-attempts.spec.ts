import type { ServerResponse } from 'node:http';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { expect, startLab, test, type Lab } from './lab-fixture';
import { openApp, row } from './ui-steps';

// Issue 27, "push, don't pull": the open call's detail follows its attempts from the live events;
// the page asks for the detail (GET /api/messages/<id>) when it opens the call, and (issue 41) not
// for a round still out, nor for an attempt it was pushed, nor after its own Replay.

test.describe.configure({ mode: 'serial' });

let lab: Lab;
let stopLab: () => Promise<void>;
let receiver: TestReceiver;
/** The first request is answered 500 at once; later ones wait here for the test. */
const holding: ServerResponse[] = [];
let answered = 0;

test.beforeAll(async () => {
  ({ lab, stop: stopLab } = await startLab());
  receiver = await startReceiver((_req, res) => {
    if (answered++ === 0) res.writeHead(500).end('no');
    else holding.push(res);
  });
  // A first retry 30 min away: only the replay below sends again.
  await lab.api('PATCH', '/settings', { retrySchedule: { preset: 'custom', delaysMs: [30 * 60_000], jitter: 0, windowMs: 4 * 3600_000 } });
});
test.afterAll(async () => {
  for (const res of holding.splice(0)) res.destroy();
  await receiver?.close();
  await stopLab?.();
});

test('an attempt pushed for the open call is shown without reading its detail again', async ({ page }) => {
  const source = await lab.api<{ id: string; writeKey: string }>('POST', '/sources', { name: 'pushed' });
  await lab.api('PATCH', `/sources/${source.id}`, { webhooks: { enabled: true, urls: [{ url: `${receiver.url}/p`, headers: {} }] } });
  const res = await fetch(`${lab.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
    body: JSON.stringify({ userId: 'e2e_pushed', event: 'E2E Pushed' }),
  });
  expect(res.status).toBe(200);
  const { items } = await lab.api<{ items: { id: number }[] }>('GET', '/messages?limit=1');
  const id = items[0].id;

  const detailPath = `/api/messages/${id}`;
  const isDetail = (url: string, method: string) => method === 'GET' && new URL(url).pathname === detailPath;
  let asked = 0;
  let answeredReads = 0;
  page.on('request', (r) => void (isDetail(r.url(), r.method()) && asked++));
  page.on('requestfinished', (r) => void (isDetail(r.url(), r.method()) && answeredReads++));

  await openApp(page, lab, 'inspector');
  await row(page, 'E2E Pushed').click();
  const attempts = page.getByTestId('attempt');
  await expect(attempts).toHaveCount(1);

  await expect.poll(() => answeredReads).toBe(1);

  // A replay asked from elsewhere (the API), held at the receiver: announced in flight, shown so in the detail, not read.
  const replay = lab.api('POST', `/messages/${id}/replay`, {});
  await expect(row(page, 'E2E Pushed').locator('.chip')).toHaveAttribute('data-status', 'in_flight');
  await expect(page.getByTestId('delivery')).toHaveAttribute('data-state', 'in_flight');

  // Its answer is pushed (attempt.recorded, then the row's summary): shown, and no detail read.
  await expect.poll(() => holding.length).toBe(1);
  holding.shift()!.writeHead(500).end('still no');
  await replay;
  await expect(attempts).toHaveCount(2);
  await expect(attempts.last()).toHaveAttribute('data-trigger', 'replay');
  await expect(row(page, 'E2E Pushed').locator('.chip')).not.toHaveAttribute('data-status', 'in_flight');
  expect(asked).toBe(1);

  // Replay from this window, held too: in flight, then its attempt, from the events alone.
  await page.getByTestId('replay-button').click();
  await expect(page.getByTestId('delivery')).toHaveAttribute('data-state', 'in_flight');
  await expect.poll(() => holding.length).toBe(1);
  holding.shift()!.writeHead(200).end('ok');
  await expect(attempts).toHaveCount(3);
  await expect(page.getByTestId('delivery')).toHaveAttribute('data-state', 'delivered');
  expect(asked).toBe(1);
});
