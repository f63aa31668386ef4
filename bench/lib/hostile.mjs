// Issue 38: the health answer, measured by the client, while hostile tracking-plan work runs: the
// issue's four hostile rules saved again and again (refused when saved, with the product), calls
// whose check runs past its 250 ms budget (checked in the workers, stopped, flagged check_timeout),
// and a flood of ordinary calls; against the same engine and flood with no hostile work, in the same
// run. Before, these held the event loop 5-22 s a call (the collector, the API and the UI share it).
import { startEngineIn } from './engine.mjs';
import { percentile } from './load.mjs';
import { basicAuth } from './bodies.mjs';

const strings = (n, prefix = 'v') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const wrap = (props) => ({ type: 'object', properties: { properties: { type: 'object', ...props } } });

/** The issue's rules: each refused when saved (work-bounds.ts). */
function hostilePlans() {
  const rules = {
    enum: wrap({ properties: { a: { type: 'array', items: { enum: strings(25_000) } } } }),
    objects: wrap({ properties: { a: { type: 'array', maxItems: 3_000, items: { enum: Array.from({ length: 8_000 }, (_, i) => ({ k: i })) } } } }),
    patterns: wrap({ patternProperties: Object.fromEntries(strings(1_000, '^p').map((p) => [p, { type: 'string' }])), additionalProperties: false }),
    anyOf: wrap({ properties: { a: { anyOf: strings(5_000, '^x').map((pattern) => ({ pattern })) } } }),
  };
  return Object.entries(rules).map(([name, jsonSchema]) => JSON.stringify({ name: `hostile ${name}`, rules: [{ type: 'TRACK', key: name, version: 1, jsonSchema }] }));
}

/** Passes every bound (2,500 × 16,384 comparisons < 50,000,000) yet a 32 KB call of 16,000 items takes seconds. */
const HEAVY_RULE = { type: 'TRACK', key: 'Heavy', version: 1, jsonSchema: wrap({ properties: { a: { type: 'array', items: { enum: strings(2_500) } } } }) };
const heavyBody = (id) => `{"userId":"u","event":"Heavy","messageId":"${id}","properties":{"a":[${new Array(16_000).fill('0').join(',')}]}}`;
const ordinaryBody = (id) => `{"userId":"u","event":"Ordinary","messageId":"${id}","properties":{"n":1}}`;

async function loop(running, fn) {
  while (running()) await fn().catch(() => undefined);
}

export async function measureHostile({ root, tmp, phase, log, seconds = 10, nodeFlags = [] }) {
  log(`\n11. hostile tracking plans (issue 38): GET /api/health every 50 ms, round trip measured by the client, for ${seconds} s beside a flood of ordinary calls; then the same with the issue's four hostile rules saved again and again (refused) and 32 KB calls whose check runs past its budget`);
  const engine = await startEngineIn(tmp, 'hostile', {
    root,
    nodeFlags,
    config: {
      sources: [{ name: 'ordinary', writeKey: 'wk_ordinary' }, { name: 'heavy', writeKey: 'wk_heavy', trackingPlan: { name: 'heavy', violations: 'block' } }],
      trackingPlans: [{ name: 'heavy', rules: [HEAVY_RULE] }],
      settings: { retentionCalls: 100_000_000 },
    },
  });
  const auth = { authorization: `Bearer ${engine.token}`, 'content-type': 'application/json' };
  const run = (hostile) =>
    phase(hostile ? 'health beside hostile plans and a flood' : 'health beside a flood, no hostile work', { engine: engine.pid }, async () => {
      const until = performance.now() + seconds * 1000;
      const running = () => performance.now() < until;
      const rtts = [];
      let n = 0;
      const counts = { ordinary: 0, heavy: 0, refused: 0 };
      const post = (key, body) => fetch(`${engine.collector}/v1/track`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: basicAuth(key) }, body });
      const plans = hostilePlans();
      const work = [
        loop(running, async () => {
          const t = performance.now();
          const res = await fetch(`${engine.ui}/api/health`, { headers: auth });
          await res.arrayBuffer();
          rtts.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, 50));
        }),
        // The flood: four connections of ordinary calls, as fast as they are answered.
        ...Array.from({ length: 4 }, () => loop(running, async () => (await post('wk_ordinary', ordinaryBody(`o-${hostile}-${n++}`))).status === 200 && counts.ordinary++)),
      ];
      if (hostile) {
        work.push(
          ...Array.from({ length: 2 }, () => loop(running, async () => (await post('wk_heavy', heavyBody(`h-${n++}`))).status === 200 && counts.heavy++)),
          loop(running, async () => {
            for (const body of plans) if ((await fetch(`${engine.ui}/api/tracking-plans`, { method: 'POST', headers: auth, body })).status === 400) counts.refused++;
          }),
        );
      }
      await Promise.all(work);
      const health = await engine.health();
      const r = { p50: percentile(rtts, 50), p99: percentile(rtts, 99), max: Math.max(...rtts), answers: rtts.length, counts, loop: health.eventLoop };
      return {
        ...r,
        summary: `health round trip p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms (${r.answers} answers); ordinary calls ${counts.ordinary}${hostile ? `, heavy calls ${counts.heavy}, hostile plans refused ${counts.refused}` : ''}; engine's loop: delay max ${health.eventLoop.delayMaxMs} ms, p99 ${health.eventLoop.delayP99Ms} ms, blocked ${health.eventLoop.blockedMs} ms`,
      };
    });
  try {
    const calm = await run(false);
    const hostile = await run(true);
    const violations = await engine.api('/violations?since=1970-01-01T00:00:00Z');
    const timeouts = violations.items.filter((i) => i.kind === 'check_timeout').reduce((s, i) => s + i.count, 0);
    log(`  calls flagged check_timeout: ${timeouts}; check workers' compiles: ${engine.stderr().split('\n').filter((l) => l.includes('check worker: plan')).length}`);
    return { calm, hostile, timeouts };
  } finally {
    await engine.stop().catch(() => engine.kill());
  }
}

export function addHostileFigures(report, h, fmt) {
  report.add({
    figure: 'health answer p99, measured by the client, while hostile work runs', value: h.hostile.p99, show: fmt.ms,
    baselineName: 'same flood, no hostile work', baseline: h.calm.p99, noise: [h.hostile, h.calm],
    target: { text: '≤ 100 ms', pass: (v) => v <= 100 },
  });
  // The engine's own eventLoop figures are in the log only: health's window (30-60 s) spans both phases.
  report.check({
    figure: 'heavy calls flagged check_timeout, hostile plans refused', ok: h.timeouts > 0 && h.hostile.counts.refused > 0,
    detail: `${h.timeouts} check_timeout, ${h.hostile.counts.refused} refused saves`, target: 'both',
  });
}
