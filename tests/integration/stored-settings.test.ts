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

// The svix preset's window was widened (its last 10 h retry never went out), but settings stored it
// whole, so a lab that chose svix before kept the old window for ever, as did a config it exported.
describe('a named preset is stored and exported as its name and what differs from it', () => {
  const OLD_SVIX_WINDOW = 5_000 + 5 * 60_000 + 30 * 60_000 + 27 * 3_600_000;

  it('svix stored whole by the build before the fix reads with the current window', async () => {
    const dataDir = lab.dataDir();
    await (await lab.start({ dataDir })).stop();
    const db = openDbFile(dataDir, { write: true });
    const stored = { ...RETRY_PRESETS.svix!, label: undefined, preset: 'svix', windowMs: OLD_SVIX_WINDOW };
    db.prepare("INSERT INTO settings (key, value) VALUES ('retrySchedule', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(JSON.stringify(stored));
    db.close();
    const engine = await lab.start({ dataDir });
    expect((await engine.call('getSettings', {})).retrySchedule.windowMs).toBe(RETRY_PRESETS.svix!.windowMs);
  });

  it('a config exported with the old svix window imports with the current one', async () => {
    const engine = await lab.start({ config: { settings: { retrySchedule: { preset: 'svix', windowMs: OLD_SVIX_WINDOW } } } });
    expect((await engine.call('getSettings', {})).retrySchedule.windowMs).toBe(RETRY_PRESETS.svix!.windowMs);
  });

  it('the settings row and the export hold the preset and its overrides only; custom in full', async () => {
    const dataDir = lab.dataDir();
    const engine = await lab.start({ dataDir });
    await engine.call('updateSettings', { retrySchedule: { preset: 'svix' } });
    expect((await engine.call('getConfig', {})).settings?.retrySchedule).toEqual({ preset: 'svix' });
    await engine.call('updateSettings', { retrySchedule: { preset: 'fast', jitter: 0.5 } });
    expect((await engine.call('getConfig', {})).settings?.retrySchedule).toEqual({ preset: 'fast', jitter: 0.5 });
    const custom = { preset: 'custom', delaysMs: [1000, 2000], jitter: 0, windowMs: 60_000, timeoutMs: 5000, retryRule: 'classic' as const };
    await engine.call('updateSettings', { retrySchedule: custom });
    expect((await engine.call('getConfig', {})).settings?.retrySchedule).toEqual(custom);
    await engine.call('updateSettings', { retrySchedule: { preset: 'svix' } });
    await engine.stop();
    const db = openDbFile(dataDir);
    expect(JSON.parse((db.prepare("SELECT value FROM settings WHERE key = 'retrySchedule'").get() as { value: string }).value)).toEqual({ preset: 'svix' });
    db.close();
  });
});
