import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from '@playwright/test';
import { expect, ownLab, ownReceivers, test, type Lab } from './lab-fixture';
import { openApp, expectCopied } from './ui-steps';
import { SNIPPET } from './segment-snippet';
import type { ReceivedRequest } from '../helpers/receiver';

// A real web page, unpatched but for the host, running the real analytics.js 2.0 the lab serves
// (@segment/analytics-next's standalone bundle) in Chromium: the official snippet with
// https://cdn.segment.com swapped for the collector (the line copied from the Client screen), and
// AnalyticsBrowser with cdnURL. Its calls must reach a receiver, signed, and the page must reach
// nothing but loopback and log no error.

const SECRET = 'browser-sdk-secret';

interface SourceRow {
  id: string;
  name: string;
  writeKey: string;
}

/** A tiny web server on 127.0.0.1 serving the given pages by path. */
async function servePages(pages: Record<string, string>): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    const html = pages[(req.url ?? '/').split('?')[0]];
    if (html === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/**
 * Opens a page and watches it: console errors, uncaught errors, and any request to a host that is
 * not loopback (refused, and recorded: analytics.js must never try the internet).
 */
async function watch(page: Page) {
  const errors: string[] = [];
  const offLoopback: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.route('**/*', (route) => {
    const host = new URL(route.request().url()).hostname;
    if (host === '127.0.0.1' || host === 'localhost') return route.continue();
    offLoopback.push(route.request().url());
    return route.abort();
  });
  return { errors, offLoopback };
}

async function createWebSource(lab: Lab, name: string, hookUrl: string): Promise<SourceRow> {
  return lab.api<SourceRow>('POST', '/sources', {
    name,
    webhooks: { enabled: true, sharedSecret: SECRET, urls: [{ url: hookUrl, headers: {} }] },
  });
}

/** The stored calls of a source, with the collector path each came in on. */
async function storedCalls(lab: Lab, sourceId: string) {
  const page = await lab.api<{ items: { id: number; type: string; status: string }[] }>('GET', `/messages?sourceId=${sourceId}&limit=50`);
  return Promise.all(
    page.items.map(async (c) => {
      const d = await lab.api<{ call: { request: { path: string; contentType: string | null } } }>('GET', `/messages/${c.id}`);
      return { type: c.type, status: c.status, path: d.call.request.path, contentType: d.call.request.contentType };
    }),
  );
}

/** Waits for the webhooks of `types` at `path` on the receiver; checks each one's signature. */
async function signedHooks(requests: ReceivedRequest[], path: string, types: string[]) {
  await expect.poll(() => requests.filter((r) => r.url === path).length, { timeout: 20_000 }).toBe(types.length);
  const got = requests.filter((r) => r.url === path);
  for (const r of got) expect(r.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(r.body).digest('hex'));
  expect(got.map((r) => (JSON.parse(r.body.toString()) as { type: string }).type).sort()).toEqual([...types].sort());
  return got.map((r) => JSON.parse(r.body.toString()) as Record<string, unknown>);
}


// A lab and receivers of its own: what other specs leave in the shared ones (sources, calls,
// recorded requests) must not change what this one reads.
const lab = ownLab();
const receivers = ownReceivers();

test('a web page with the real analytics.js snippet, host swapped, sends identify, track and page to a receiver, signed, singly and batched', async ({ page, context }) => {
  const std = await createWebSource(lab, 'web-standard', `${receivers.ok.url}/sdk-standard`);
  const batched = await createWebSource(lab, 'web-batched', `${receivers.ok.url}/sdk-batched`);

  // The snippet host, copied from the Client screen as a user would.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(lab.uiUrl).origin });
  await openApp(page, lab, 'client');
  const section = page.getByTestId('browser-sdk');
  await expect(section.getByTestId('sdk-version')).toHaveText(/@segment\/analytics-next \d+\.\d+\.\d+/);
  const snippetLine = `${lab.collectorUrl}/analytics.js/v1/${std.writeKey}/analytics.min.js`;
  await expect(section.getByTestId(`sdk-snippet-${std.id}`)).toHaveText(snippetLine);
  await section.getByTestId(`sdk-copy-snippet-${std.id}`).click();
  await expectCopied(section.getByTestId(`sdk-copy-snippet-${std.id}`));
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(snippetLine);
  await section.getByTestId(`sdk-copy-cdnurl-${batched.id}`).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`AnalyticsBrowser.load({ writeKey: '${batched.writeKey}', cdnURL: '${lab.collectorUrl}' })`);
  const copiedHost = snippetLine.slice(0, snippetLine.indexOf('/analytics.js/'));

  const pageWith = (writeKey: string, loadOptions: string, calls: string) =>
    `<!doctype html><html><head><title>Shop</title><script>\n${SNIPPET.replace('https://cdn.segment.com', copiedHost)
      .replaceAll('YOUR_WRITE_KEY', writeKey)
      .replace('/*LOAD_OPTIONS*/', loadOptions)}\n</script></head><body><script>${calls}</script></body></html>`;
  const calls = (who: string) =>
    `analytics.identify(${JSON.stringify(who)}, { email: "${who}@example.com" }); analytics.track("Order Completed", { total: 30, who: ${JSON.stringify(who)} });`;
  const site = await servePages({
    '/standard.html': pageWith(std.writeKey, '', calls('browser-standard')),
    '/batched.html': pageWith(
      batched.writeKey,
      `, { integrations: { "Segment.io": { deliveryStrategy: { strategy: "batching", config: { size: 3, timeout: 500 } } } } }`,
      calls('browser-batched'),
    ),
  });

  try {
    for (const [file, source, hookPath, expectedPath] of [
      ['standard.html', std, '/sdk-standard', /^\/v1\/[pit]$/],
      ['batched.html', batched, '/sdk-batched', /^\/v1\/b$/],
    ] as const) {
      const tab = await context.newPage();
      const seen = await watch(tab);
      await tab.goto(`${site.origin}/${file}`);

      const hooks = await signedHooks(receivers.ok.requests, hookPath, ['page', 'identify', 'track']);
      const track = hooks.find((h) => h.type === 'track')!;
      expect(track).toMatchObject({ event: 'Order Completed', properties: { total: 30 } });
      expect((track.context as { library: { name: string } }).library.name).toBe('analytics.js');

      const stored = await storedCalls(lab, source.id);
      expect(stored.map((c) => c.type).sort()).toEqual(['identify', 'page', 'track']);
      for (const c of stored) {
        expect(c.status).toBe('accepted');
        expect(c.path).toMatch(expectedPath);
        expect(c.contentType).toBe('text/plain');
      }
      expect(seen.offLoopback).toEqual([]);
      expect(seen.errors).toEqual([]);
      await tab.close();
    }
  } finally {
    site.server.close();
  }
});

test('AnalyticsBrowser.load({ writeKey, cdnURL: collector }) from the UMD build sends a signed track', async ({ context }) => {
  const source = await createWebSource(lab, 'web-npm', `${receivers.ok.url}/sdk-npm`);
  // The npm entry needs a bundler; in a plain page its UMD build (dist/umd/index.js, global
  // AnalyticsNext) is the same AnalyticsBrowser, served by the collector with the chunks.
  const site = await servePages({
    '/npm.html': `<!doctype html><html><head><title>Npm</title>
<script src="${lab.collectorUrl}/analytics-next/bundles/index.js"></script></head><body><script>
const analytics = AnalyticsNext.AnalyticsBrowser.load({ writeKey: ${JSON.stringify(source.writeKey)}, cdnURL: ${JSON.stringify(lab.collectorUrl)} });
analytics.track("Npm Track", { via: "cdnURL" });
</script></body></html>`,
  });
  try {
    const tab = await context.newPage();
    const seen = await watch(tab);
    await tab.goto(`${site.origin}/npm.html`);
    const [hook] = await signedHooks(receivers.ok.requests, '/sdk-npm', ['track']);
    expect(hook).toMatchObject({ event: 'Npm Track', properties: { via: 'cdnURL' } });
    expect(seen.offLoopback).toEqual([]);
    expect(seen.errors).toEqual([]);
  } finally {
    site.server.close();
  }
});

test('library metrics posted to /v1/m show in the Client screen, and are not calls', async ({ page }) => {
  const before = (await lab.api<{ total: number }>('GET', '/messages?limit=1')).total;
  const res = await fetch(`${lab.collectorUrl}/v1/m`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: JSON.stringify({ series: [{ type: 'Counter', metric: 'analytics_js.invoke', value: 1, tags: { type: 'track', library: 'analytics.js', library_version: 'next-1.84.3' } }] }),
  });
  expect(res.status).toBe(200);
  await openApp(page, lab, 'client');
  await page.getByTestId('sdk-metrics-refresh').click();
  await expect(page.getByTestId('sdk-metrics')).toContainText('analytics_js.invoke');
  await expect(page.getByTestId('sdk-metrics')).toContainText('next-1.84.3');
  expect((await lab.api<{ total: number }>('GET', '/messages?limit=1')).total).toBe(before);
});
