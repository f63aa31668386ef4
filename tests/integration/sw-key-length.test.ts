import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';

// Standard Webhooks keys shorter than the spec's 24 bytes: a config written before the rule still
// starts (with a warning) and its key still signs; the same key given anew is refused on its field.

const lab = testLab();
const SHORT = `whsec_${Buffer.from('short').toString('base64')}`;

describe('Standard Webhooks key length', () => {
  it('a config file with a 5-byte key starts, warns once, and keeps the key; a new short key is refused', async () => {
    const lines: string[] = [];
    const t = await lab.start({
      log: (l) => lines.push(l),
      config: { sources: [{ name: 'old', writeKey: 'wk_old', webhooks: { enabled: true, urls: [{ url: 'http://127.0.0.1:9/x', headers: {} }], standardWebhooksSecret: SHORT } }] },
    });
    expect(lines.filter((l) => l.includes('Standard Webhooks secret still used'))).toEqual([
      'warning: source "old": Standard Webhooks secret still used, but the key is 5 bytes; the Standard Webhooks spec asks for 24 to 64 random bytes: generate a new secret (a new one this short is refused)',
    ]);
    const [old] = await t.call('listSources', {});
    expect(old.webhooks.standardWebhooksSecret).toBe(SHORT);
    // Saving other fields with the stored key unchanged works; a new short key does not.
    await t.call('updateSource', { id: old.id, name: 'old2', webhooks: old.webhooks });
    const other = `whsec_${Buffer.from('other').toString('base64')}`;
    await expect(t.call('updateSource', { id: old.id, webhooks: { ...old.webhooks, standardWebhooksSecret: other } })).rejects.toThrow(/webhooks\.standardWebhooksSecret: the key is 5 bytes/);
    await expect(t.call('createSource', { name: 'new', webhooks: { enabled: false, urls: [], standardWebhooksSecret: SHORT } })).rejects.toMatchObject({
      fields: [{ path: 'webhooks.standardWebhooksSecret' }],
    });
  });
});
