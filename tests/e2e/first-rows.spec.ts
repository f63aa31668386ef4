import type { Page } from '@playwright/test';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { expect, startLab, test, type Lab } from './lab-fixture';

// first-page.ts (inlined) paints the inspector's first rows before the app bundle runs. Here the bundle
// is held back, so the painted rows can be read, then let go: React's rows must replace them with
// the same cells in the same places, and a click on a painted row must open that call.

const BUNDLE = /\/assets\/index-[^/]+\.js$/;

/** Holds the app bundle until release() is called. */
async function holdBundle(page: Page): Promise<() => void> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await page.route(BUNDLE, async (route) => {
    await released;
    await route.continue();
  });
  return release;
}

interface Cell {
  className: string;
  text: string;
  title: string | null;
  box: { x: number; y: number; width: number; height: number };
}

/** Every visible row with its cells and where they are; the countdown's seconds move, so they are left out. */
function readRows(page: Page) {
  return page.evaluate(() => {
    const box = (el: Element) => {
      const r = el.getBoundingClientRect();
      return { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) };
    };
    const cell = (el: Element): Cell => ({
      className: el.className,
      text: (el.textContent ?? '').replace(/ in \d+[hms].*$/, ' in …'),
      title: el.getAttribute('title'),
      box: box(el),
    });
    const rows = [...document.querySelectorAll('[data-testid="call-row"]')].filter((r) => r.getBoundingClientRect().top < innerHeight);
    return {
      nav: [...document.querySelectorAll('.sidebar a')].map((a) => `${a.textContent} ${a.getAttribute('href')} ${a.className}`),
      head: [...document.querySelectorAll('.call-head > span')].map(cell),
      rows: rows.map((r) => ({
        id: r.getAttribute('data-id'),
        status: r.getAttribute('data-status'),
        selected: r.getAttribute('aria-selected'),
        className: r.className,
        box: box(r),
        cells: [...r.children].map((c) => ({ ...cell(c), chip: c.firstElementChild ? cell(c.firstElementChild) : null })),
      })),
    };
  });
}

const painted = (page: Page) => page.locator('[data-first-rows] [data-testid="call-row"]');
const fromReact = (page: Page) => page.locator('[data-testid="call-list"] [data-testid="call-row"]');

test.describe.configure({ mode: 'serial' });

// A lab of its own: the shared one's other specs expect to start with no sources.
let lab: Lab;
let stopLab: () => Promise<void>;
let receivers: TestReceiver[] = [];

test.afterAll(async () => {
  await stopLab?.();
  await Promise.all(receivers.map((r) => r.close()));
});

test.beforeAll(async () => {
  ({ lab, stop: stopLab } = await startLab());
  // Nothing may change between the two readings: with the default schedule the retrying call's
  // second attempt comes 5 s after its first, and on a busy machine it landed between them (tries
  // 1 → 2, latency 23 → 35 ms). A first retry 30 min away keeps every row still for the whole file;
  // 30 min, not an hour, so the countdown keeps one shape ("29m 59s") and one width.
  await lab.api('PATCH', '/settings', { retrySchedule: { preset: 'custom', delaysMs: [30 * 60_000], jitter: 0, windowMs: 4 * 3600_000 } });
  receivers = [
    await startReceiver((_req, res) => res.writeHead(200).end('ok')),
    await startReceiver((_req, res) => res.writeHead(500).end('receiver exploded')),
  ];
  const ok = await lab.api<{ writeKey: string }>('POST', '/sources', { name: 'rows-ok', webhooks: { enabled: true, urls: [{ url: `${receivers[0].url}/hook` }] } });
  const failing = await lab.api<{ writeKey: string }>('POST', '/sources', { name: 'rows-failing', webhooks: { enabled: true, urls: [{ url: `${receivers[1].url}/hook` }] } });
  const send = async (writeKey: string, body: object) => {
    const res = await fetch(`${lab.collectorUrl}/v1/batch`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ batch: [body] }),
    });
    expect(res.status).toBe(200);
  };
  // One call in each state a row can show: delivered, retrying (with its countdown), not forwarded,
  // dropped with its reason, and an anonymous user.
  await send(ok.writeKey, { type: 'track', userId: 'rows_delivered', event: 'Rows Delivered', messageId: 'rows-dup' });
  await send(ok.writeKey, { type: 'track', userId: 'rows_dup', event: 'Rows Duplicate', messageId: 'rows-dup' });
  await send(ok.writeKey, { type: 'identify', userId: 'rows_off', traits: { plan: 'pro' }, integrations: { All: false } });
  await send(ok.writeKey, { type: 'page', anonymousId: '0f8e2b8c-4a1d-4c1e-9b7a-3b3c1d2e5f60', name: '<b>Home</b>' });
  await send(failing.writeKey, { type: 'track', userId: 'rows_retrying', event: 'Rows Retrying' });
  await expect
    .poll(async () => {
      const page1 = await lab.api<{ items: { status: string; deliveryState: string | null }[] }>('GET', '/messages?limit=100');
      return page1.items.map((c) => (c.status === 'dropped' ? 'dropped' : (c.deliveryState ?? 'none'))).sort();
    })
    // Every call, not just one of each state: the page call still in flight would change under the test.
    .toEqual(['delivered', 'delivered', 'dropped', 'none', 'retrying']);
});

test('the painted rows are the rows React renders, in the same places', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  // The script is inline, allowed by its hash in both the page's policy and the server's.
  const refused: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && /Content Security Policy/i.test(m.text()) && refused.push(m.text())));
  const release = await holdBundle(page);
  await page.goto(`${lab.uiUrl.split('#')[0]}#/inspector`, { waitUntil: 'commit' }); // 'load' waits for the held bundle
  await expect(painted(page).first()).toBeVisible();
  // A browser paints nothing before the stylesheet is in, but layout can be read before: on a busy
  // machine the rows were measured unstyled. Read them as a user first sees them.
  await page.waitForFunction(() => [...document.querySelectorAll<HTMLLinkElement>('link[rel="stylesheet"]')].every((l) => l.sheet !== null));
  const before = await readRows(page);
  // Untrusted fields are text: the page name's markup is shown, not parsed.
  expect(before.rows.some((r) => r.cells.some((c) => c.text === '<b>Home</b>'))).toBe(true);
  expect(new Set(before.rows.map((r) => r.status))).toEqual(new Set(['delivered', 'dropped', 'not_forwarded', 'retrying']));

  release();
  await expect(page.locator('[data-first-rows]')).toHaveCount(0);
  await expect(fromReact(page).first()).toBeVisible();
  await expect(page.getByTestId('calls-total')).not.toHaveText('0 calls');
  const after = await readRows(page);
  expect(after.nav).toEqual(before.nav);
  expect(after.head).toEqual(before.head);
  expect(after.rows).toEqual(before.rows.slice(0, after.rows.length));
  expect(after.rows.length).toBe(before.rows.length);
  expect(refused).toEqual([]);
});

test('a click on a painted row opens that call once the app runs', async ({ page }) => {
  const release = await holdBundle(page);
  await page.goto(`${lab.uiUrl.split('#')[0]}#/inspector`, { waitUntil: 'commit' }); // 'load' waits for the held bundle
  const target = painted(page).filter({ hasText: 'rows_retrying' });
  const id = await target.getAttribute('data-id');
  await target.click();
  await expect(target).toHaveAttribute('aria-selected', 'true');

  release();
  await expect(page.getByTestId('call-detail')).toHaveAttribute('data-call-id', id!);
  await expect(fromReact(page).filter({ hasText: 'rows_retrying' })).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('url-next-retry')).toBeVisible();
});

test('a nav link followed before the app runs opens that screen', async ({ page }) => {
  const release = await holdBundle(page);
  await page.goto(`${lab.uiUrl.split('#')[0]}#/inspector`, { waitUntil: 'commit' }); // 'load' waits for the held bundle
  await expect(painted(page).first()).toBeVisible();
  await page.locator('[data-first-rows] .sidebar a', { hasText: 'Settings' }).click();
  release();
  await expect(page.getByTestId('nav-settings')).toHaveAttribute('aria-current', 'page');
  await expect(page.locator('[data-first-rows]')).toHaveCount(0);
});
