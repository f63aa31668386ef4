import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import { MAX_METRIC_KEYS } from '../../src/main/engine/collector/library-metrics';

// The web-page flow over a real socket: settings, the analytics.js bundle and its chunks, /v1/m.
let t: TestEngine;
const KEY = 'wk_browser_routes';
const pkgFile = createRequire(__filename).resolve('@segment/analytics-next/package.json');
const umd = join(dirname(pkgFile), 'dist', 'umd');
const version = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { version: string }).version;

beforeAll(async () => {
  t = await startTestEngine({ config: { sources: [{ name: 'web', writeKey: KEY }] } });
});
afterAll(() => t.stop());

/** GET with the request target sent exactly as written (fetch would normalize `..`). */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const port = Number(new URL(t.collectorUrl).port);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /v1/projects/:writeKey/settings', () => {
  it('answers CDN-shaped settings whose Segment.io integration points at this collector', async () => {
    const res = await fetch(`${t.collectorUrl}/v1/projects/${KEY}/settings`);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const s = (await res.json()) as {
      integrations: Record<string, Record<string, unknown>>;
      plan: { track: { __default: unknown } };
      metrics: Record<string, unknown>;
      webhookLab: { analyticsNextVersion: string };
    };
    const host = new URL(t.collectorUrl).host;
    expect(s.integrations['Segment.io']).toMatchObject({ apiKey: KEY, apiHost: `${host}/v1`, protocol: 'http', unbundledIntegrations: [] });
    expect(Object.keys(s.integrations)).toEqual(['Segment.io']);
    expect(s.plan.track.__default).toEqual({ enabled: true, integrations: {} });
    expect(s.metrics).toMatchObject({ host: `${host}/v1` });
    expect(s).toMatchObject({ analyticsNextEnabled: true, edgeFunction: {}, remotePlugins: [], legacyVideoPluginsEnabled: false });
    expect(s.webhookLab.analyticsNextVersion).toBe(version);
  });

  it('takes the host from a loopback Host header, and its own address for any other name', async () => {
    const viaLocalhost = JSON.parse((await rawGet(`/v1/projects/${KEY}/settings`, { host: 'localhost:9999' })).body.toString());
    expect(viaLocalhost.integrations['Segment.io'].apiHost).toBe('localhost:9999/v1');
    const viaOther = JSON.parse((await rawGet(`/v1/projects/${KEY}/settings`, { host: 'evil.example:80' })).body.toString());
    expect(viaOther.integrations['Segment.io'].apiHost).toBe(`${new URL(t.collectorUrl).host}/v1`);
  });

  it('answers an unknown write key with a plain 404 that names no source (any page can read it)', async () => {
    const res = await fetch(`${t.collectorUrl}/v1/projects/nope/settings`);
    expect(res.status).toBe(404);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const body = (await res.json()) as { message: string };
    expect(body).toEqual({ success: false, message: 'no source has this write key' });
  });
});

describe('analytics.js and its chunks', () => {
  it('serves the standalone bundle at the snippet path, after the preamble that names this origin as its CDN', async () => {
    const res = await fetch(`${t.collectorUrl}/analytics.js/v1/${KEY}/analytics.min.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    const text = await res.text();
    expect(text.endsWith(readFileSync(join(umd, 'standalone.js'), 'utf8'))).toBe(true);
    expect(text.slice(0, 300)).toContain('_cdn');
  });

  it('serves every chunk file of dist/umd by its exact name', async () => {
    const chunk = (await import('node:fs')).readdirSync(umd).find((n) => /\.bundle\.[0-9a-f]+\.js$/.test(n));
    expect(chunk).toBeDefined();
    const res = await fetch(`${t.collectorUrl}/analytics-next/bundles/${chunk}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/javascript/);
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(umd, chunk!)))).toBe(true);
  });

  it.each([
    '/analytics-next/bundles/../package.json',
    '/analytics-next/bundles/..%2fpackage.json',
    '/analytics-next/bundles/%2e%2e%2f%2e%2e%2fpackage.json',
    '/analytics-next/bundles/..%5c..%5cpackage.json',
    '/analytics-next/bundles/standalone.js.gz',
    '/analytics-next/bundles/nope.bundle.0000.js',
    '/analytics-next/bundles/',
  ])('answers 404 for %s', async (path) => {
    const res = await rawGet(path);
    expect(res.status).toBe(404);
    expect(res.body.toString()).not.toContain('"name": "@segment/analytics-next"');
  });
});

describe('POST /v1/m', () => {
  const series = (metric: string, type = 'track') => ({
    series: [{ type: 'Counter', metric, value: 1, tags: { type, library: 'analytics.js', library_version: `next-${version}` } }],
  });

  it('answers 200 to text/plain without auth, stores no call, and counts the metric per library version', async () => {
    const before = (await t.call('listMessages', { limit: 1 })).total;
    const res = await fetch(`${t.collectorUrl}/v1/m`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(series('analytics_js.invoke')) });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.json()).toEqual({ success: true });
    const noType = await fetch(`${t.collectorUrl}/v1/m`, { method: 'POST', body: Buffer.from(JSON.stringify(series('analytics_js.invoke', 'page'))) });
    expect(noType.status).toBe(200);

    const m = await t.call('getLibraryMetrics', {});
    expect(m.analyticsNext).toEqual({ version });
    expect(m.reports).toBe(2);
    expect(m.metrics).toContainEqual({ metric: 'analytics_js.invoke', library: 'analytics.js', libraryVersion: `next-${version}`, count: 2 });
    expect((await t.call('listMessages', { limit: 1 })).total).toBe(before);
  });

  it('refuses a body that is not JSON metrics, or larger than 64 KB, with 400', async () => {
    const post = (body: string) => fetch(`${t.collectorUrl}/v1/m`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
    expect((await post('not json')).status).toBe(400);
    expect((await post('{"batch":[]}')).status).toBe(400);
    const big = await post(JSON.stringify({ series: [], pad: 'x'.repeat(64 * 1024) }));
    expect(big.status).toBe(400);
    expect(((await big.json()) as { message: string }).message).toContain('64 KB');
  });

  it('keeps at most MAX_METRIC_KEYS distinct counters and counts the rest as overflow', async () => {
    const many = { series: Array.from({ length: MAX_METRIC_KEYS + 10 }, (_, i) => ({ type: 'Counter', metric: `analytics_js.m${i}`, value: 1, tags: {} })) };
    expect((await fetch(`${t.collectorUrl}/v1/m`, { method: 'POST', body: JSON.stringify(many) })).status).toBe(200);
    const m = await t.call('getLibraryMetrics', {});
    expect(m.metrics.length).toBe(MAX_METRIC_KEYS);
    expect(m.overflow).toBeGreaterThanOrEqual(10);
  });
});
