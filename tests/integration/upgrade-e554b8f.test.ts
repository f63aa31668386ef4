import { describe, expect, it } from 'vitest';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { testLab } from '../helpers/test-lab';
import { loadConfigFile } from '../../src/main/load-config';
import { openDbFile } from '../helpers/db-file';

// Upgrades lose nothing (issue 26): a data folder and a config file made by release e554b8f (the one
// before this round; tests/fixtures/release-e554b8f/make.mjs made them with it) open with this release,
// with their calls, deliveries, attempts, secrets, receivers and audiences, and the config still loads.
const FIXTURE = join(__dirname, '../fixtures/release-e554b8f');
const lab = testLab();

async function openFixture(withConfig: boolean) {
  const dataDir = lab.dataDir();
  cpSync(join(FIXTURE, 'data'), dataDir, { recursive: true });
  // The retry the fixture left scheduled (an hour after it was made) is long due by now: moved an
  // hour ahead, so that the upgraded lab is seen to keep it waiting rather than send it at once.
  const db = openDbFile(dataDir, { write: true });
  try {
    db.prepare("UPDATE deliveries SET next_attempt_at = ? WHERE state = 'retrying'").run(Date.now() + 3_600_000);
  } finally {
    db.close();
  }
  const config = withConfig ? loadConfigFile(join(FIXTURE, 'config.json')) : undefined;
  return lab.start({ dataDir, config });
}

describe('a data folder and config made by release e554b8f', () => {
  it('opens with every call, delivery, attempt and secret it had', async () => {
    const t = await openFixture(false);
    const calls = (await t.call('listMessages', { limit: 50 })).items;
    expect(calls.map((c) => c.messageId).sort()).toEqual(['fx-acts-1', 'fx-acts-2', 'fx-acts-3', 'fx-dropped', 'fx-identify', 'fx-order', 'fx-page', 'fx-retrying']);
    expect(calls.find((c) => c.messageId === 'fx-dropped')!.status).toBe('dropped');

    const order = await t.call('getMessage', { id: calls.find((c) => c.messageId === 'fx-order')!.id });
    const [classic] = order.deliveries;
    expect(classic.state).toBe('delivered');
    expect(classic.attempts.map((a) => a.responseStatus).sort()).toEqual([200, 503]);
    expect(classic.attempts.every((a) => a.signature && a.requestHeaders['webhook-signature'])).toBe(true);
    // Facts on the attempt (issue 27) read from rows made before them: an answer has none.
    expect(classic.attempts.map((a) => [a.timeoutMs, a.tlsError, a.connectError])).toEqual([[null, null, null], [null, null, null]]);

    const acts = await t.call('getMessage', { id: calls.find((c) => c.messageId === 'fx-acts-1')!.id });
    expect(acts.deliveries.map((d) => [d.kind, d.mapping ?? null, d.state])).toEqual([
      ['classic', null, 'delivered'],
      ['actions', 'orders', 'delivered'],
      ['actions', 'all', 'delivered'],
    ]);
    expect(JSON.parse(acts.deliveries[1].body)).toEqual({ order: 'o-1', who: 'user u2' });
    expect(JSON.parse(acts.deliveries[2].body)).toHaveLength(3);

    // Left retrying (its next attempt an hour ahead): still unfinished, not lost, not sent again early.
    const retrying = await t.call('getMessage', { id: calls.find((c) => c.messageId === 'fx-retrying')!.id });
    expect(retrying.deliveries[0].state).toBe('retrying');
    expect(retrying.deliveries[0].attempts).toHaveLength(retrying.deliveries[0].attemptCount);
    const health = await t.call('health', {});
    expect(health.pendingDeliveries).toBe(1);
    expect(health.storage.ok).toBe(true);

    const config = await t.call('getConfig', {});
    const shop = config.sources.find((s) => s.name === 'shop')!;
    expect(shop.writeKey).toBe('wk_fixture_shop');
    expect(shop.webhooks).toMatchObject({ sharedSecret: 'fixture-s3cret', standardWebhooksSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
    expect((await t.call('listReceivers', {})).map((r) => r.name)).toContain('flaky');
    expect((await t.call('listAudiences', {})).map((a) => a.name)).toContain('Buyers');
  });

  it('its config file still loads, and applying it to its own data folder changes nothing', async () => {
    const t = await openFixture(true);
    expect((await t.call('listSources', {})).map((s) => s.name).sort()).toEqual(['acts', 'down', 'shop']);
    expect((await t.call('listMessages', { limit: 50 })).items).toHaveLength(8);
  });
});
