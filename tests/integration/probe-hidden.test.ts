import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { matchesFilters } from '../../src/renderer/stores/inspector-merge';
import { listQuery } from '../../src/renderer/stores/inspector.slice';

// The Inspector hides the calls of the source "probe" (issue 40: each Check a receiver run adds about
// 45) unless asked; the API lists them unless `probe=false`. The live merge (matchesFilters) and the
// engine's list agree on which calls the Inspector's filters keep.

const lab = testLab();

describe('probe calls in lists', () => {
  it('listMessages leaves out the probe source\'s calls with probe=false, and the live merge agrees', async () => {
    const t = await lab.start({ config: { sources: [{ name: 'web', writeKey: 'wk_web' }, { name: 'probe', writeKey: 'wk_probe' }] } });
    expect((await t.post('/v1/track', { userId: 'u', event: 'Mine' }, { writeKey: 'wk_web' })).status).toBe(200);
    expect((await t.post('/v1/track', { userId: 'u', event: 'Probe Call' }, { writeKey: 'wk_probe' })).status).toBe(200);
    const all = await t.call('listMessages', {});
    expect(all.items.map((c) => c.label).sort()).toEqual(['Mine', 'Probe Call']);
    const hidden = await t.call('listMessages', { probe: false });
    expect(hidden.items.map((c) => c.label)).toEqual(['Mine']);
    expect(hidden.total).toBe(1);
    expect((await t.call('listMessages', { probe: true })).total).toBe(2);
    const probeId = all.items.find((c) => c.label === 'Probe Call')!.sourceId!;
    // The Inspector's filters as it sends them: hidden by default, shown when ticked or filtered on.
    for (const filters of [{}, { probe: true }, { sourceId: probeId }]) {
      const listed = (await t.call('listMessages', { ...listQuery(filters), limit: 100 })).items.map((c) => c.id);
      expect(all.items.filter((c) => matchesFilters(c, filters)).map((c) => c.id), JSON.stringify(filters)).toEqual(listed);
    }
    expect((await t.call('listMessages', listQuery({}))).items.map((c) => c.label)).toEqual(['Mine']);
  });
});
