import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { openDbFile } from '../helpers/db-file';
import { RETRY_PRESETS } from '../../src/shared/retry-schedule';

// A retry preset named "constructor" was accepted before it was refused (`in` found the inherited
// name) and stored without delays; refusing new ones left a lab that stored one jammed: every retry
// threw and the call's deliveries stayed pending for good (a review found it after the fix). The
// stored schedule is read through the same resolution a write gets.

const lab = testLab();

describe('a retry schedule stored by an older build', () => {
  it.each(['{"preset":"constructor"}', '{"preset":"__proto__"}', '"toString"'])('%s reads as the default, and retries run', async (row) => {
    const receiver = await lab.receiver((_req, res) => res.writeHead(500).end());
    const config = { sources: [{ name: 'app', writeKey: 'wk_old', webhooks: { enabled: true, urls: [{ url: `${receiver.url}/hook` }] } }] };
    const dataDir = lab.dataDir();
    await (await lab.start({ dataDir, config })).stop();
    const db = openDbFile(dataDir, { write: true });
    db.prepare("INSERT INTO settings (key, value) VALUES ('retrySchedule', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(row);
    db.close();

    const engine = await lab.start({ dataDir });
    const settings = await engine.call('getSettings', {});
    expect(settings.retrySchedule).toMatchObject({ preset: 'default', delaysMs: RETRY_PRESETS.default!.delaysMs });
    expect((await engine.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: 'wk_old' })).status).toBe(200);
    const [call] = await waitFor(async () => {
      const items = (await engine.call('listMessages', { limit: 1 })).items;
      return items[0]?.deliveryState === 'retrying' ? items : undefined;
    }, 'a retry scheduled');
    expect(call!.urls[0]).toMatchObject({ lastStatus: 500, attempts: 1 });
  });
});
