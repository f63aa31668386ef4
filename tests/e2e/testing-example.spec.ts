import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import { LabTimeoutError, startLab, type Lab } from 'webhook-lab/testing';
import { SNIPPET } from './segment-snippet';

// docs/testing.md's Playwright example, as a user writes it: `webhook-lab/testing` imported by the
// package's name (its export map: out/main/testing.js, which global-setup builds), a lab started in
// the test process, a shop page with Segment's real snippet loading the real analytics.js from the
// lab, and the assertions made with waitForCall. The page must reach nothing but loopback.

let lab: Lab;
let shop: Server;
let shopUrl: string;

test.beforeAll(async () => {
  lab = await startLab();
  const snippet = SNIPPET.replace('https://cdn.segment.com', lab.collectorUrl).replaceAll('YOUR_WRITE_KEY', lab.writeKey).replace('/*LOAD_OPTIONS*/', '');
  const page = `<!doctype html><html><head><title>Shop</title><script>\n${snippet}\n</script></head>
<body><button onclick="analytics.track('Order Completed', { total: 42, currency: 'EUR', products: [{ sku: 'tee' }, { sku: 'cap' }] })">Buy</button>
<button onclick="analytics.identify('user-7', { plan: 'pro' })">Sign in</button></body></html>`;
  shop = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page));
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/`;
});

test.afterAll(async () => {
  await new Promise((resolve) => shop?.close(resolve));
  await lab?.stop();
});

test.beforeEach(async ({ page }) => {
  await lab.reset();
  await page.route('**/*', (route) => {
    const host = new URL(route.request().url()).hostname;
    return host === '127.0.0.1' ? route.continue() : route.abort();
  });
});

test('the shop page loads analytics.js from the lab; Buy tracks Order Completed, asserted with waitForCall', async ({ page }) => {
  const offLoopback: string[] = [];
  page.on('requestfailed', (r) => offLoopback.push(r.url()));
  await page.goto(shopUrl);
  const pageCall = await lab.waitForCall({ type: 'page' }, { timeoutMs: 15_000 });
  expect(pageCall).toMatchObject({ writeKey: lab.writeKey, context: { page: { path: '/', title: 'Shop' }, library: { name: 'analytics.js' } } });

  await page.getByRole('button', { name: 'Buy' }).click();
  const call = await lab.waitForCall({ type: 'track', event: 'Order Completed', properties: { total: 42 } }, { timeoutMs: 15_000 });
  expect(call.properties).toEqual({ total: 42, currency: 'EUR', products: [{ sku: 'tee' }, { sku: 'cap' }] });
  expect(call.anonymousId).toBe(pageCall.anonymousId);

  await page.getByRole('button', { name: 'Sign in' }).click();
  await lab.waitForCall({ type: 'identify', userId: 'user-7', traits: { plan: 'pro' } }, { timeoutMs: 15_000 });
  await lab.expectNoCall({ type: 'track', event: 'Order Refunded' }, { forMs: 200 });
  expect(offLoopback).toEqual([]);
});

test('a wait that times out says which call came closest and how it differs', async ({ page }) => {
  await page.goto(shopUrl);
  await page.getByRole('button', { name: 'Buy' }).click();
  await lab.waitForCall({ event: 'Order Completed' }, { timeoutMs: 15_000 });
  const err = await lab.waitForCall({ event: 'Order Completed', properties: { total: 41 } }, { timeoutMs: 200 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LabTimeoutError);
  expect((err as Error).message).toContain('1) track "Order Completed" (anonymousId');
  expect((err as Error).message).toContain('properties.total\n         - expected 41\n         + received 42');
});
