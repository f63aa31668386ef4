// Issue 4's figure: navigation → the inspector's first rows in the DOM, with 100,000 stored calls,
// in Chromium against web mode. The baseline is the same browser loading a static page of the same
// 40 rows from a bare Node server: the floor this machine's browser sets before any app code runs.
import { createServer } from 'node:http';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { basicAuth } from './bodies.mjs';
import { startEngine } from './engine.mjs';

export const INSPECTOR_CALLS = 100_000;
const BATCH = 2500;
const WRITE_KEY = 'wk_inspector';

const item = (i) => ({ type: 'track', userId: `perf_user_${i % 5000}`, event: `Perf Event ${i % 50}`, properties: { i } });

/** A page with 40 rows like the inspector's, no script: what the browser alone costs. */
function staticPage() {
  const rows = Array.from({ length: 40 }, (_, i) => `<div data-testid="call-row"><span>12:00:0${i % 10}.000</span><span>perf</span><span>track</span><span>perf_user_${i}</span><span>Perf Event ${i}</span><span>not forwarded</span><span>0</span><span>—</span></div>`);
  return `<!doctype html><html><head><meta charset="utf-8"><title>baseline</title></head><body><div>${rows.join('')}</div></body></html>`;
}

function startStaticServer() {
  const html = staticPage();
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }).end(html));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() })));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Cold visits (a fresh browser context each: nothing cached) and reloads of the same tab, for the
 * inspector and the baseline page alternately. Resolves { skipped } when there is no Chromium.
 */
export async function measureInspector({ root, tmp, rounds = 5, log }) {
  const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (!existsSync(executablePath)) return { skipped: `no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH)` };
  const { chromium } = await import('@playwright/test');
  const dataDir = join(tmp, 'inspector-data');
  mkdirSync(dataDir);
  const engine = await startEngine({ root, dataDir, config: { sources: [{ name: 'inspector', writeKey: WRITE_KEY }] } });
  const baseline = await startStaticServer();
  let browser;
  try {
    const t0 = performance.now();
    for (let start = 0; start < INSPECTOR_CALLS; start += BATCH) {
      const res = await fetch(`${engine.collector}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basicAuth(WRITE_KEY) },
        body: JSON.stringify({ batch: Array.from({ length: BATCH }, (_, k) => item(start + k)) }),
      });
      if (res.status !== 200) throw new Error(`filling the inspector: collector answered ${res.status}`);
    }
    log(`  stored ${INSPECTOR_CALLS.toLocaleString('en-US')} calls in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const apiT0 = performance.now();
    const page1 = await engine.api('/messages?limit=100');
    const apiMs = performance.now() - apiT0;

    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    const inspectorUrl = `${engine.ui}/?token=${engine.token}#/inspector`;
    const figures = { inspector: { cold: [], reload: [], appCold: [], appReload: [] }, baseline: { cold: [], reload: [] } };
    let rowsInDom = 0;
    // One throwaway visit first: the browser's own first-page start-up is not the app's.
    for (let round = -1; round < rounds; round++) {
      for (const which of round % 2 === 0 ? ['inspector', 'baseline'] : ['baseline', 'inspector']) {
        const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
        const page = await context.newPage();
        // Stamped inside the page, so the test driver's polling adds nothing. The first rows may be
        // painted by first-page.js before the app runs; React's own rows (in the call list,
        // clickable, filterable) are stamped apart.
        await page.addInitScript(() => {
          new MutationObserver((_m, observer) => {
            window.__firstRowAt ??= document.querySelector('[data-testid="call-row"]') ? performance.now() : undefined;
            window.__appRowAt ??= document.querySelector('[data-testid="call-list"] [data-testid="call-row"]') ? performance.now() : undefined;
            if (window.__appRowAt !== undefined) observer.disconnect();
          }).observe(document, { childList: true, subtree: true });
        });
        const rowsAt = async () => {
          await page.locator(which === 'inspector' ? '[data-testid="call-list"] [data-testid="call-row"]' : '[data-testid="call-row"]').first().waitFor();
          return page.evaluate(() => ({ first: window.__firstRowAt, app: window.__appRowAt ?? window.__firstRowAt }));
        };
        await page.goto(which === 'inspector' ? inspectorUrl : baseline.url);
        const cold = await rowsAt();
        // A user reloads a settled page; right after the first rows the app still loads the rest.
        await page.waitForTimeout(1000);
        await page.reload();
        const reload = await rowsAt();
        if (which === 'inspector') rowsInDom = await page.locator('[data-testid="call-row"]').count();
        await context.close();
        if (round >= 0) {
          figures[which].cold.push(cold.first);
          figures[which].reload.push(reload.first);
          if (which === 'inspector') {
            figures.inspector.appCold.push(cold.app);
            figures.inspector.appReload.push(reload.app);
          }
        }
      }
    }
    const show = (xs) => xs.map((x) => Math.round(x)).join(', ');
    log(`  inspector, first rows: cold ${show(figures.inspector.cold)} ms; reload ${show(figures.inspector.reload)} ms; ${rowsInDom} rows in the DOM`);
    log(`  inspector, the app's own rows (clickable): cold ${show(figures.inspector.appCold)} ms; reload ${show(figures.inspector.appReload)} ms`);
    log(`  baseline (static 40-row page): cold ${show(figures.baseline.cold)} ms; reload ${show(figures.baseline.reload)} ms`);
    log(`  GET /api/messages?limit=100 from Node: ${apiMs.toFixed(1)} ms (total ${page1.total.toLocaleString('en-US')})`);
    return {
      cold: median(figures.inspector.cold),
      reload: median(figures.inspector.reload),
      appCold: median(figures.inspector.appCold),
      appReload: median(figures.inspector.appReload),
      baselineCold: median(figures.baseline.cold),
      baselineReload: median(figures.baseline.reload),
      apiMs,
      rowsInDom,
    };
  } finally {
    await browser?.close();
    baseline.close();
    await engine.stop().catch(() => engine.kill());
  }
}
