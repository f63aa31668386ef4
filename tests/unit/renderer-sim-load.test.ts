import { describe, expect, it } from 'vitest';
import { COMPOSE_TEMPLATE, defaultLoadDraft, linePath, loadInputOf, niceMax, progressOf, ratesOf, templateOf } from '../../src/renderer/stores/load-model';
import { createAppStore } from '../../src/renderer/stores/app.store';
import { newerRun } from '../../src/renderer/stores/load.slice';
import { loadInputSchema, type LoadRun, type LoadSample } from '../../src/shared/simulation.contract';
import { FakeApi, invalid } from './renderer-sim-fake-api';

const compose = { type: 'identify' as const, message: { userId: 'u1', anonymousId: 'a', traits: { plan: 'pro' } }, ok: true };

function run(patch: Partial<LoadRun> = {}): LoadRun {
  return { id: 'r1', state: 'running', startedAt: '2025-01-01T00:00:00.000Z', endedAt: null, rate: 10, target: 100, sent: 25, accepted: 20, errors: 0, lastError: null, samples: [], ...patch };
}

describe('load form model', () => {
  it('templates draw random users by default, from a sample call or the Compose draft', () => {
    const d = defaultLoadDraft();
    const t = templateOf(d, compose)!;
    expect(t.type).toBe('track');
    expect(t.userId).toBe('{{userId}}');
    expect(t).not.toHaveProperty('anonymousId');
    expect(templateOf({ ...d, template: COMPOSE_TEMPLATE }, compose)).toEqual({ type: 'identify', userId: '{{userId}}', traits: { plan: 'pro' } });
    expect(templateOf({ ...d, template: COMPOSE_TEMPLATE, randomUsers: false }, compose)).toEqual({ type: 'identify', userId: 'u1', anonymousId: 'a', traits: { plan: 'pro' } });
    expect(templateOf({ ...d, template: COMPOSE_TEMPLATE }, { ...compose, ok: false })).toBeNull();
  });

  it('builds startLoad input for a duration or a total, and names bad fields', () => {
    const d = defaultLoadDraft();
    const t = templateOf(d, compose);
    const a = loadInputOf({ ...d, rate: '200', durationS: '30', sourceId: 's1' }, t);
    expect(a.input).toEqual({ rate: 200, users: 100, durationS: 30, sourceId: 's1', template: t });
    expect(loadInputSchema.safeParse(a.input).success).toBe(true);
    expect(loadInputOf({ ...d, stopBy: 'total', total: '5000' }, t).input).toMatchObject({ total: 5000 });
    expect(loadInputOf({ ...d, rate: 'fast', stopBy: 'total', total: '1.5' }, null).errors).toEqual({ rate: 'a number', total: 'a whole number', template: 'choose a template' });
  });

  it('turns cumulative samples into per-second rates', () => {
    const s = (t: number, accepted: number, delivered: number, failed: number, p50: number | null): LoadSample => ({ t, sent: accepted, accepted, delivered, failed, retrying: 2, p50Ms: p50, p99Ms: p50 && p50 * 3 });
    const r = ratesOf([s(1, 10, 8, 0, 5), s(1, 10, 8, 0, 5), s(3, 50, 48, 4, null)]);
    expect(r).toEqual([
      { t: 1, accepted: 10, delivered: 8, failed: 0, retrying: 2, p50: 5, p99: 15 },
      { t: 3, accepted: 20, delivered: 20, failed: 2, retrying: 2, p50: null, p99: null },
    ]);
  });

  it('draws lines that break on missing values, on round axes', () => {
    const id = (v: number) => v;
    expect(linePath([{ x: 0, y: 1 }, { x: 1, y: 2 }, { x: 2, y: null }, { x: 3, y: 4 }], id, id)).toBe('M0.0,1.0L1.0,2.0M3.0,4.0');
    expect([niceMax(0), niceMax(3), niceMax(7), niceMax(120), niceMax(1000)]).toEqual([1, 5, 10, 200, 1000]);
    expect(progressOf(run())).toBe(0.25);
    expect(progressOf(run({ state: 'done' }))).toBe(1);
  });
});

describe('load slice', () => {
  it('a late running event does not undo a stop; a newer run replaces the old one', () => {
    expect(newerRun(null, run())).toBe(true);
    expect(newerRun(run({ state: 'stopped' }), run())).toBe(false);
    expect(newerRun(run(), run({ state: 'done' }))).toBe(true);
    expect(newerRun(run({ state: 'stopped' }), run({ id: 'r2', startedAt: '2025-01-01T00:01:00.000Z' }))).toBe(true);
    expect(newerRun(run({ id: 'r2', startedAt: '2025-01-01T00:01:00.000Z' }), run())).toBe(false);
  });

  it('start shows field errors from the engine, stop keeps the final run', async () => {
    const api = new FakeApi()
      .on('startLoad', (i) => {
        if (i.rate > 20_000) throw invalid([{ path: 'rate', message: 'Too big: expected number to be <=20000' }]);
        return run({ sent: 0 });
      })
      .on('stopLoad', () => run({ state: 'stopped', sent: 40 }));
    const store = createAppStore(api);
    const template = { type: 'track' as const, event: 'x' };
    expect(await store.getState().startLoad({ rate: 50_000, durationS: 1, template })).toBe(false);
    expect(store.getState().loadFormError?.fieldMessage('rate')).toMatch(/20000/);
    expect(await store.getState().startLoad({ rate: 10, durationS: 10, template })).toBe(true);
    expect(store.getState().loadFormError).toBeNull();
    store.getState().setLoadRun(run({ sent: 20 }));
    expect(store.getState().loadRun?.sent).toBe(20);
    await store.getState().stopLoad();
    store.getState().setLoadRun(run({ sent: 39 }));
    expect(store.getState().loadRun).toMatchObject({ state: 'stopped', sent: 40 });
  });
});
