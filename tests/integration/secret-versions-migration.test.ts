import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from '../../src/main/engine/store/store';
import { MIGRATIONS } from '../../src/main/engine/store/migrations';
import { registerSearchFunctions } from '../../src/main/engine/store/database';

// The migration that keeps secrets once (issue 27): a lab whose sources hold their secrets in their
// webhooks JSON and whose deliveries carry the Standard Webhooks secret they were frozen with
// (sw_secret) opens with the secrets in source_secrets, versioned, and each delivery naming its version.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const CURRENT = `whsec_${Buffer.from('the current key, 24 byte').toString('base64')}`;
const OLDER = `whsec_${Buffer.from('an older key, 24 bytes!!').toString('base64')}`;
const OLDEST = `whsec_${Buffer.from('the oldest key, 24 bytes').toString('base64')}`;
const MINE = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE source_secrets'));

/** A database as the version before left it: secrets in sources.webhooks and in deliveries.sw_secret. */
function before(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wl-secrets-'));
  dirs.push(dir);
  const db = new Database(join(dir, 'webhook-lab.db'));
  registerSearchFunctions(db);
  for (const m of MIGRATIONS.slice(0, MINE)) db.exec(m);
  db.pragma(`user_version = ${MINE}`);
  const source = db.prepare('INSERT INTO sources (id, name, write_key, created_at, webhooks) VALUES (?, ?, ?, 1, ?)');
  const webhooks = (extra: object) => JSON.stringify({ enabled: true, urls: [{ url: 'http://127.0.0.1:9/hook', headers: {} }], ...extra });
  source.run('s1', 'signed', 'wk_1', webhooks({ sharedSecret: 'x-secret', standardWebhooksSecret: CURRENT }));
  source.run('s2', 'plain', 'wk_2', webhooks({ sharedSecret: '' }));
  db.prepare("INSERT INTO requests (id, received_at, meta, body) VALUES (1, 1, '{}', '{}')").run();
  const call = db.prepare("INSERT INTO calls (id, source_key, received_at, type, status, request_id) VALUES (?, NULL, 1, 'track', 'accepted', 1)");
  const delivery = db.prepare("INSERT INTO deliveries (id, call_id, source_id, type, state, urls, pending_urls, body, sw_id, sw_secret) VALUES (?, ?, ?, 'track', ?, '[]', '[]', x'7b7d', ?, ?)");
  const rows: [number, string, string, string | null, string | null][] = [
    [1, 's1', 'delivered', 'msg_1', OLDEST],
    [2, 's1', 'retrying', 'msg_2', OLDER],
    [3, 's1', 'retrying', 'msg_3', CURRENT],
    [4, 's1', 'delivered', 'msg_4', OLDEST],
    [5, 's2', 'delivered', null, null],
  ];
  for (const [id, sourceId, state, swId, secret] of rows) {
    call.run(id);
    delivery.run(id, id, sourceId, state, swId, secret);
  }
  db.close();
  return dir;
}

describe('migration: secrets kept once, versioned', () => {
  it('moves the sources\' secrets and the deliveries\' frozen ones into source_secrets; each delivery names its version; nothing else holds a secret', () => {
    const dir = before();
    const store = new Store({ dataDir: dir });
    try {
      // The API's sources are as before, with their versions.
      expect(store.sources.get('s1')!.webhooks).toMatchObject({ sharedSecret: 'x-secret', standardWebhooksSecret: CURRENT });
      expect(store.sources.get('s1')!.secretVersions).toMatchObject({ sharedSecret: { version: 1 }, standardWebhooksSecret: { version: 3, rotated: false } });
      expect(store.sources.get('s2')!.webhooks.sharedSecret).toBeUndefined();
      // Retries sign with the secret each delivery was frozen with.
      const active = (id: number) => store.deliveriesOfCall(id)[0];
      expect(active(2).standardWebhooks).toEqual({ id: 'msg_2', version: 2 });
      expect(store.signingSecrets('s1', active(2).standardWebhooks!.version, Date.now())).toEqual([OLDER]);
      expect(store.signingSecrets('s1', active(3).standardWebhooks!.version, Date.now())).toEqual([CURRENT]);
      expect(active(1).standardWebhooks).toEqual({ id: 'msg_1', version: 1 });
      expect(active(5).standardWebhooks).toBeNull();
      // Versions: the oldest (finished deliveries only) and the older (a retrying one) are retired.
      expect(store.sources.secrets.prune(Date.now(), 0)).toBe(1);
      expect(store.signingSecrets('s1', 1, Date.now())).toEqual([]);
      expect(store.signingSecrets('s1', 2, Date.now())).toEqual([OLDER]);
    } finally {
      store.close();
    }
    const db = new Database(join(dir, 'webhook-lab.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) FROM deliveries WHERE sw_secret IS NOT NULL').pluck().get()).toBe(0);
      const sources = db.prepare('SELECT webhooks FROM sources').pluck().all() as string[];
      for (const w of sources) expect(w).not.toMatch(/secret/i);
      // The pruned version's row stays with its number, its secret erased (issue 40: "since retired").
      expect(db.prepare("SELECT source_id, kind, version, retired_at IS NOT NULL AS retired, secret != '' AS kept FROM source_secrets ORDER BY kind, version").all()).toEqual([
        { source_id: 's1', kind: 'shared', version: 1, retired: 0, kept: 1 },
        { source_id: 's1', kind: 'standard', version: 1, retired: 1, kept: 0 },
        { source_id: 's1', kind: 'standard', version: 2, retired: 1, kept: 1 },
        { source_id: 's1', kind: 'standard', version: 3, retired: 0, kept: 1 },
      ]);
    } finally {
      db.close();
    }
  });
});

describe('which versions sign (SourceSecrets over a real file)', () => {
  it('rotations in quick succession: the current version and the one before it sign, newest first, plus the own older version of a delivery while its window is open; each window closes on its own; an edit opens none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wl-secrets-'));
    dirs.push(dir);
    const store = new Store({ dataDir: dir });
    try {
      const H = 3_600_000;
      const s = store.sources.create({ name: 'app', webhooks: { enabled: false, urls: [], standardWebhooksSecret: OLDEST } }, 0);
      store.sources.rotate(s.id, 'standardWebhooksSecret', OLDER, 10 * H);
      store.sources.rotate(s.id, 'standardWebhooksSecret', CURRENT, 20 * H);
      const secrets = store.sources.secrets;
      const sign = (version: number, at: number) => secrets.signingSecrets(s.id, version, at, 24 * H);
      // At most the current version and the one before it, however many rotations are open.
      expect(sign(3, 21 * H)).toEqual([CURRENT, OLDER]);
      // A delivery of version 1 while its window is open: those two and its own (a retry keeps its version).
      expect(sign(1, 21 * H)).toEqual([CURRENT, OLDER, OLDEST]);
      // Version 2's window (from 10 h) is over at 34 h, version 3's (from 20 h) is not.
      expect(sign(3, 40 * H)).toEqual([CURRENT, OLDER]);
      expect(sign(1, 40 * H)).toEqual([OLDEST]);
      expect(sign(3, 44 * H)).toEqual([CURRENT]);
      expect(sign(2, 44 * H)).toEqual([OLDER]);
      expect(secrets.prune(40 * H, 24 * H)).toBe(1);
      expect(secrets.prune(44 * H, 24 * H)).toBe(1);
      expect(sign(2, 44 * H)).toEqual([]);
      // An edit through the settings: a new version, no window.
      store.sources.update(s.id, { webhooks: { enabled: false, urls: [], standardWebhooksSecret: OLDER } }, 45 * H);
      expect(sign(4, 45 * H)).toEqual([OLDER]);
      expect(store.sources.get(s.id)!.secretVersions?.standardWebhooksSecret).toMatchObject({ version: 4, rotated: false });
    } finally {
      store.close();
    }
  });
});
