import { startEngineIn } from './engine.mjs';
import { saturateInChild } from './load.mjs';
import { basicAuth } from './bodies.mjs';

// Tracking plans (issue 24): batch ingestion with a 50-rule plan connected, against the same run
// without a plan, in one engine (two sources), alternating rounds so the machine's noise falls on
// both, and which goes first alternating too (the drift as the database grows falls on both). The
// bodies are the bench's usual track calls ("Order Completed", bodies.mjs); the plan has a rule for
// that event checking every property it sends (types, a pattern, an enum, the products' items) and
// 49 other rules, so each call is checked by a real rule, not looked up and skipped.

const BATCH_SIZE = 100;

function planRules() {
  const order = {
    type: 'TRACK',
    key: 'Order Completed',
    version: 1,
    jsonSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        properties: {
          type: 'object',
          properties: {
            orderId: { type: 'string', pattern: '^ord-[0-9]{8}-[0-9]{4}$' },
            revenue: { type: 'number', minimum: 0 },
            currency: { enum: ['USD', 'EUR', 'GBP'] },
            products: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' }, name: { type: 'string' }, price: { type: 'number' }, quantity: { type: 'integer', minimum: 1 } }, required: ['sku', 'price'] } },
          },
          required: ['orderId', 'revenue', 'currency'],
        },
        context: { type: 'object' },
      },
      required: ['properties'],
    },
  };
  const others = Array.from({ length: 49 }, (_, i) => ({
    type: 'TRACK',
    key: `Event ${i}`,
    version: 1,
    jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'] } } },
  }));
  return [order, ...others];
}

export async function measurePlans({ root, tmp, phase, log, connections, durationS, rounds = Number(process.env.BENCH_PLAN_ROUNDS ?? 3), warmup = process.env.BENCH_PLAN_WARMUP === '1', nodeFlags = [] }) {
  log(`\n10. tracking plans (issue 24): batches of ${BATCH_SIZE} with a 50-rule plan connected, against the same without a plan, ${rounds} alternating rounds of ${durationS} s`);
  const engine = await startEngineIn(tmp, 'plans', {
    root,
    nodeFlags,
    config: {
      sources: [{ name: 'plain', writeKey: 'wk_plain' }, { name: 'planned', writeKey: 'wk_planned', trackingPlan: { name: 'bench' } }],
      trackingPlans: [{ name: 'bench', rules: planRules() }],
      settings: { retentionCalls: 100_000_000 },
    },
  });
  const run = (key, n) =>
    phase(`${key === 'wk_plain' ? 'no plan' : '50-rule plan'}, round ${n}`, { engine: engine.pid }, async () => {
      const r = await saturateInChild({ root, url: `${engine.collector}/v1/batch`, connections, duration: durationS, headers: { 'content-type': 'application/json', authorization: basicAuth(key) }, body: { kind: 'batch', prefix: `${key}-${n}`, size: BATCH_SIZE } });
      r.children = { generator: r.cpuSeconds };
      return { ...r, summary: `${Math.round(r.perSecond * BATCH_SIZE)} events/s (${r.acked} × 2xx, ${r.non2xx} non-2xx, ${r.errors} errors)` };
    });
  try {
    const plain = [];
    const planned = [];
    if (warmup) {
      await run('wk_plain', 0);
      await run('wk_planned', 0);
    }
    // In turns, the first of each pair alternating: the database grows through the run and each round
    // is a little slower than the one before (1–1.5 % a round: 208 rounds of 2026-12-01), which a fixed
    // order charged to the plan, its rounds always second.
    for (let n = 1; n <= rounds; n++) {
      if (n % 2 === 1) {
        plain.push(await run('wk_plain', n));
        planned.push(await run('wk_planned', n));
      } else {
        planned.push(await run('wk_planned', n));
        plain.push(await run('wk_plain', n));
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const plainEps = median(plain.map((r) => r.perSecond * BATCH_SIZE));
    const plannedEps = median(planned.map((r) => r.perSecond * BATCH_SIZE));
    // Each planned round against its own pair's: with the first of each pair alternating, the drift
    // cancels in these ratios, not in the two medians (their rounds fall at different places in the run).
    const pairRatio = median(planned.map((r, i) => r.perSecond / plain[i].perSecond));
    const violations = await engine.api('/violations?since=1970-01-01T00:00:00Z');
    log(`  medians: no plan ${Math.round(plainEps)} events/s, with the plan ${Math.round(plannedEps)} events/s (${(plannedEps / plainEps).toFixed(2)}×); median of the ${rounds} paired rounds ${pairRatio.toFixed(2)}×; calls checked ${violations.checked}, with violations ${violations.withViolations}`);
    return { plainEps, plannedEps, pairRatio, pairs: rounds, checked: violations.checked, withViolations: violations.withViolations, others: Math.max(...plain.concat(planned).map((r) => r.others)), noise: [...plain, ...planned] };
  } finally {
    await engine.stop().catch(() => engine.kill());
  }
}

export function addPlanFigures(report, p) {
  report.add({
    figure: 'batch events/s, 50-rule tracking plan connected', value: p.plannedEps,
    baselineName: 'same engine, source without a plan', baseline: p.plainEps, noise: p.noise,
    target: { text: 'ratio ≥ 0.9', pass: (_, r) => r >= 0.9 },
  });
  report.check({ figure: 'the same, median of the paired rounds (first alternating)', ok: p.pairRatio >= 0.9, detail: `${p.pairRatio.toFixed(2)}× over ${p.pairs} pairs`, target: 'ratio ≥ 0.9' });
  report.check({ figure: 'every planned call checked, none in violation', ok: p.checked > 0 && p.withViolations === 0, detail: `${p.checked} checked, ${p.withViolations} with violations`, target: 'all clean' });
}
