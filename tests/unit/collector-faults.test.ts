import { describe, expect, it } from 'vitest';
import { FaultInjector, derivedSeed } from '../../src/main/engine/collector/fault-injector';
import { mulberry32 as seededRandom } from '../../src/main/engine/seeded-random';
import { collectorFaultsSchema, describeRefusals, type CollectorFaults } from '../../src/shared/collector-faults';
import type { Source } from '../../src/shared/types';

const source = (collectorFaults: CollectorFaults | null, id = 'src-1'): Source => ({
  id,
  name: id,
  writeKey: `wk_${id}`,
  createdAt: '2024-01-01T00:00:00.000Z',
  webhooks: { enabled: false, urls: [] },
  collectorFaults,
});

/** Which of n requests get a fault, as a string of 0/1. */
function pattern(inj: FaultInjector, s: Source, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += inj.draw(s) ? '1' : '0';
  return out;
}

describe('seeded selection', () => {
  it('the same seed gives the same sequence; another seed another one', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const xs = Array.from({ length: 100 }, () => a());
    expect(Array.from({ length: 100 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 100 }, () => c())).not.toEqual(xs);
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
  });

  it('two injectors with the same settings pick the same requests, whatever the source id when a seed is given', () => {
    const f: CollectorFaults = { rate: 0.5, mode: 'status', status: 503, seed: 7 };
    const p1 = pattern(new FaultInjector(0), source(f, 'a'), 200);
    expect(pattern(new FaultInjector(0), source(f, 'b'), 200)).toBe(p1);
    expect(p1).toMatch(/0/);
    expect(p1).toMatch(/1/);
  });

  it('without a seed, the sequence is derived from the source id: stable for a source, different between sources', () => {
    const f: CollectorFaults = { rate: 0.5, mode: 'reset' };
    expect(derivedSeed('a')).toBe(derivedSeed('a'));
    expect(derivedSeed('a')).not.toBe(derivedSeed('b'));
    expect(pattern(new FaultInjector(0), source(f, 'a'), 200)).toBe(pattern(new FaultInjector(0), source(f, 'a'), 200));
    expect(pattern(new FaultInjector(0), source(f, 'a'), 200)).not.toBe(pattern(new FaultInjector(0), source(f, 'b'), 200));
  });

  it('rate 0 never, rate 1 always', () => {
    const inj = new FaultInjector(0);
    expect(pattern(inj, source({ rate: 0, mode: 'hang', seed: 1 }, 'zero'), 10_000)).not.toMatch(/1/);
    expect(pattern(inj, source({ rate: 1, mode: 'hang', seed: 1 }, 'one'), 10_000)).not.toMatch(/0/);
  });

  it.each([0.01, 0.1, 0.5, 0.9])('rate %s: the share of 10,000 requests is within 5 standard deviations of the rate', (rate) => {
    const n = 10_000;
    // Binomial(n, rate): a fair draw lands outside rate ± 5σ with probability below 1e-6.
    const tolerance = (5 * Math.sqrt(n * rate * (1 - rate))) / n;
    for (const seed of [1, 2, 3]) {
      const hits = pattern(new FaultInjector(0), source({ rate, mode: 'reset', seed }), n).split('1').length - 1;
      expect(Math.abs(hits / n - rate)).toBeLessThanOrEqual(tolerance);
    }
  });

  it('new settings start the sequence over; the same settings object continues it', () => {
    const inj = new FaultInjector(0);
    const f: CollectorFaults = { rate: 0.5, mode: 'status', seed: 9 };
    const s = source(f);
    const first = pattern(inj, s, 50);
    const continued = pattern(inj, s, 50);
    expect(continued).not.toBe(first);
    expect(pattern(inj, source({ ...f }), 50)).toBe(first);
  });

  it('counts per source and outcome; no settings, no draw', () => {
    const inj = new FaultInjector(Date.parse('2024-01-01T00:00:00Z'));
    const s = source({ rate: 1, mode: 'status', status: 429, retryAfterS: 3 });
    const d = inj.draw(s);
    expect(d).toMatchObject({ mode: 'status', status: 429, retryAfterS: 3, outcome: '429' });
    inj.draw(s);
    inj.draw(source({ rate: 1, mode: 'delay', delayMs: 5 }, 'slow'));
    expect(inj.draw(source(null, 'none'))).toBeNull();
    expect(inj.snapshot()).toEqual({ since: '2024-01-01T00:00:00.000Z', sources: { 'src-1': { '429': 2 }, slow: { delay: 1 } } });
    expect(describeRefusals(inj.snapshot().sources['src-1'])).toBe('refused by fault injection: 429 ×2');
    expect(describeRefusals(inj.snapshot().sources.slow)).toBeNull();
    inj.forget('src-1');
    expect(inj.snapshot().sources['src-1']).toBeUndefined();
  });
});

describe('collectorFaults schema', () => {
  const issues = (v: unknown) => {
    const r = collectorFaultsSchema.safeParse(v);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('accepts each mode with its fields', () => {
    expect(issues({ rate: 0.5, mode: 'status', status: 429, retryAfterS: 2, seed: 1 })).toEqual([]);
    expect(issues({ rate: 1, mode: 'delay', delayMs: 100 })).toEqual([]);
    expect(issues({ rate: 0, mode: 'hang' })).toEqual([]);
    expect(issues({ rate: 0.1, mode: 'reset' })).toEqual([]);
  });

  it('names the field of what is wrong', () => {
    expect(issues({ rate: 1.5, mode: 'status' })).toEqual(['rate: must be between 0 and 1']);
    expect(issues({ rate: -0.1, mode: 'status' })).toEqual(['rate: must be between 0 and 1']);
    expect(issues({ rate: 0.5, mode: 'status', status: 200 })).toEqual(['status: must be a 4xx or 5xx status']);
    expect(issues({ rate: 0.5, mode: 'delay' })).toEqual(['delayMs: required with mode "delay"']);
    expect(issues({ rate: 0.5, mode: 'hang', status: 503 })).toEqual(['status: only with mode "status"']);
    expect(issues({ rate: 0.5, mode: 'explode' })).toEqual(['mode: must be one of status, delay, hang, reset']);
    expect(issues({ rate: 0.5, mode: 'reset', extra: 1 })[0]).toMatch(/extra/);
  });
});
