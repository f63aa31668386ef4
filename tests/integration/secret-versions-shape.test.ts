import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestEngine } from '../helpers/engine';

// A source's `secretVersions` has one key per secret, null when that secret is not set, whether the
// source was just written or read back at a start (it was `{}` after a start and all-null after an edit).

const dataDir = mkdtempSync(join(tmpdir(), 'wl-secret-shape-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('secretVersions', () => {
  it('names both secrets, null for one not set, the same after a restart', async () => {
    const first = await startTestEngine({ dataDir });
    const none = await first.call('createSource', { name: 'none' });
    const shared = await first.call('createSource', { name: 'shared', webhooks: { enabled: false, sharedSecret: 'abc', urls: [] } });
    expect(none.secretVersions).toEqual({ sharedSecret: null, standardWebhooksSecret: null });
    expect(shared.secretVersions).toEqual({ sharedSecret: expect.objectContaining({ version: 1 }), standardWebhooksSecret: null });
    const written = await first.call('listSources', {});
    await first.stop({ keepData: true });

    const second = await startTestEngine({ dataDir });
    try {
      const read = await second.call('listSources', {});
      for (const name of ['none', 'shared']) {
        expect(read.find((s) => s.name === name)!.secretVersions).toEqual(written.find((s) => s.name === name)!.secretVersions);
      }
      expect(read.find((s) => s.name === 'none')!.secretVersions).toEqual({ sharedSecret: null, standardWebhooksSecret: null });
    } finally {
      await second.stop({ keepData: true });
    }
  });
});
