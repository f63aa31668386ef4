// Issue 38: a config import and a tracking plan's import, measured by GET /api/health asked every
// 50 ms meanwhile (the longest wait from one answer to the next, less the pause), against the same
// engine's health asked while it does nothing, in the same run. Before, 10,000 sources held the loop
// for seconds (the import grew faster than its size), and a 2,000-rule plan was compiled on it.
import { startEngineIn } from './engine.mjs';
import { bigPlanRules } from './restart.mjs';

export const IMPORT_SOURCES = 10_000;
export const IMPORT_RULES = 2_000;
const PAUSE_MS = 50;

/** Sources as a config file gives them: a URL with a header and a secret each. */
function manySources(n) {
  return Array.from({ length: n }, (_, i) => ({
    name: `imported-${i}`,
    writeKey: `wk_imported_${i}`,
    webhooks: { enabled: true, urls: [{ url: `https://r${i % 50}.example/hook/${i}`, headers: { 'x-tenant': `t${i}` } }], sharedSecret: `secret-${i}` },
  }));
}

/** Health asked every 50 ms while `work` runs: the longest wait between two answers (less the pause), and the work's time. */
async function healthDuring(engine, work) {
  const auth = { authorization: `Bearer ${engine.token}` };
  let done = false;
  let longest = 0;
  let answers = 0;
  const watch = (async () => {
    let last = performance.now();
    while (!done) {
      await (await fetch(`${engine.ui}/api/health`, { headers: auth })).arrayBuffer();
      const now = performance.now();
      longest = Math.max(longest, now - last);
      answers++;
      await new Promise((r) => setTimeout(r, PAUSE_MS));
      last = performance.now();
    }
  })();
  const t = performance.now();
  const result = await work();
  const ms = performance.now() - t;
  done = true;
  await watch;
  return { ms, longest, answers, result };
}

export async function measureImports({ root, tmp, log, nodeFlags = [] }) {
  log(`\n14. imports (issue 38): a config of ${IMPORT_SOURCES.toLocaleString('en-US')} sources (POST /api/config), the same again, and a tracking plan of ${IMPORT_RULES.toLocaleString('en-US')} rules (POST /api/tracking-plans); GET /api/health every ${PAUSE_MS} ms meanwhile`);
  const engine = await startEngineIn(tmp, 'imports', { root, nodeFlags, config: { sources: [{ name: 'first', writeKey: 'wk_first' }] } });
  const post = (path, body) => async () => {
    const res = await fetch(`${engine.ui}/api${path}`, { method: 'POST', headers: { authorization: `Bearer ${engine.token}`, 'content-type': 'application/json' }, body });
    const text = await res.text();
    if (!res.ok) throw new Error(`POST /api${path}: ${res.status} ${text.slice(0, 300)}`);
    return text;
  };
  try {
    const idle = await healthDuring(engine, () => new Promise((r) => setTimeout(r, 3_000)));
    const config = JSON.stringify({ sources: manySources(IMPORT_SOURCES) });
    const created = await healthDuring(engine, post('/config', config));
    const again = await healthDuring(engine, post('/config', config));
    const plan = JSON.stringify({ name: 'imported plan', rules: bigPlanRules(IMPORT_RULES) });
    const planned = await healthDuring(engine, post('/tracking-plans', plan));
    const sources = (await engine.api('/sources')).length;
    const line = (what, r) => log(`  ${what}: ${(r.ms / 1000).toFixed(2)} s; health's longest wait ${r.longest.toFixed(0)} ms (${r.answers} answers)`);
    log(`  health alone, 3 s: longest wait ${idle.longest.toFixed(0)} ms (${idle.answers} answers)`);
    line(`config of ${IMPORT_SOURCES.toLocaleString('en-US')} new sources (${(config.length / 1048576).toFixed(1)} MB)`, created);
    line('the same config again (nothing changes)', again);
    line(`tracking plan of ${IMPORT_RULES.toLocaleString('en-US')} rules (${(plan.length / 1048576).toFixed(1)} MB)`, planned);
    const loop = (await engine.health()).eventLoop;
    log(`  sources stored: ${sources}; engine's loop over the last ${loop.windowS} s: delay max ${loop.delayMaxMs} ms, p99 ${loop.delayP99Ms} ms, blocked ${loop.blockedMs} ms`);
    return { idle, created, again, planned, sources };
  } finally {
    await engine.stop().catch(() => engine.kill());
  }
}

export function addImportFigures(report, r, fmt) {
  const quarter = { text: '< 250 ms', pass: (v) => v < 250 };
  const tenSeconds = { text: '< 10 s', pass: (v) => v < 10 };
  report.add({ figure: `config import of ${IMPORT_SOURCES.toLocaleString('en-US')} new sources: time`, value: r.created.ms / 1000, show: fmt.s, baselineName: 'same engine, health alone, 3 s', baseline: 3, target: tenSeconds });
  report.add({ figure: `config import of ${IMPORT_SOURCES.toLocaleString('en-US')} new sources: health's longest wait`, value: r.created.longest, show: fmt.ms, baselineName: 'same engine idle, 3 s', baseline: r.idle.longest, target: quarter });
  report.add({ figure: 'the same config again: health\'s longest wait', value: r.again.longest, show: fmt.ms, baselineName: 'same engine idle, 3 s', baseline: r.idle.longest, target: quarter });
  report.add({ figure: `tracking plan of ${IMPORT_RULES.toLocaleString('en-US')} rules: import time`, value: r.planned.ms / 1000, show: fmt.s, baselineName: 'same engine, health alone, 3 s', baseline: 3, target: tenSeconds });
  report.add({ figure: `tracking plan of ${IMPORT_RULES.toLocaleString('en-US')} rules: health's longest wait`, value: r.planned.longest, show: fmt.ms, baselineName: 'same engine idle, 3 s', baseline: r.idle.longest, target: quarter });
  report.check({ figure: 'every imported source stored', ok: r.sources === IMPORT_SOURCES + 1, detail: `${r.sources} of ${IMPORT_SOURCES + 1}`, target: 'all' });
}
