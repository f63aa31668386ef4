import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { waitFor, type TestEngine } from '../helpers/engine';
import type { ReceivedRequest } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';
import type { Store } from '../../src/main/engine/store/store';
import { startLab } from '../../src/main/testing';

// Secrets kept once, versioned (issue 27): a source's secrets live in source_secrets, one row per
// version; a delivery names the version it was created with, never the secret; a rotation keeps the
// old version signing for the rotation window (both webhook-signature values go out, as Svix sends
// them), and the old version is dropped once no unfinished delivery needs it. Signatures are checked
// with the reference `standardwebhooks` package.

const lab = testLab();
const KEY = 'wk_rotation';
const OLD = `whsec_${Buffer.from('the old key, 24 bytes!!!').toString('base64')}`;
const NEW = `whsec_${Buffer.from('the new key, 24 bytes!!!').toString('base64')}`;
const SHARED = 'shared-secret-in-clear';

const swHeaders = (r: ReceivedRequest) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});
const verifies = (secret: string, r: ReceivedRequest) => {
  try {
    new Webhook(secret).verify(r.body.toString('utf8'), swHeaders(r));
    return true;
  } catch {
    return false;
  }
};
/** Each `v1,…` of the header as a request of its own: which secrets each single signature verifies with. */
const eachSignature = (r: ReceivedRequest) =>
  String(r.headers['webhook-signature']).split(' ').map((sig) => ({ ...r, headers: { ...r.headers, 'webhook-signature': sig } }));

function config(url: string, settings: Record<string, unknown> = {}) {
  return {
    sources: [{ name: 'app', writeKey: KEY, webhooks: { enabled: true, sharedSecret: SHARED, standardWebhooksSecret: OLD, urls: [{ url, headers: {} }] } }],
    settings,
  };
}

function versionsIn(t: TestEngine): { kind: string; version: number; retired: boolean }[] {
  const db = new Database(join(t.dataDir, 'webhook-lab.db'), { readonly: true });
  try {
    // The versions whose secret is kept (a dropped one's row stays, its secret erased).
    return (db.prepare("SELECT kind, version, retired_at FROM source_secrets WHERE secret != '' ORDER BY kind, version").all() as { kind: string; version: number; retired_at: number | null }[])
      .map((r) => ({ kind: r.kind, version: r.version, retired: r.retired_at !== null }));
  } finally {
    db.close();
  }
}

async function sourceOf(t: TestEngine) {
  return (await t.call('listSources', {}))[0];
}

describe('rotation', () => {
  it('a retry after a rotation signs with the version its delivery was created with; a new delivery with the new one', async () => {
    let fail = true;
    const r = await lab.receiver((req, res) => void res.writeHead(fail && req.url === '/first' ? 500 : 200).end());
    const t = await lab.start({
      config: {
        ...config(`${r.url}/first`, { secretRotationWindowMs: 0, retrySchedule: { preset: 'custom', delaysMs: [300], jitter: 0, windowMs: 3_600_000 } }),
      },
    });
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Before' }, { writeKey: KEY })).status).toBe(200);
    await r.waitForRequests(1);
    const rotated = await t.call('rotateSecret', { id: (await sourceOf(t)).id, which: 'standardWebhooksSecret', secret: NEW });
    const before = r.requests.length;
    expect(rotated.webhooks.standardWebhooksSecret).toBe(NEW);
    expect(rotated.secretVersions?.standardWebhooksSecret).toMatchObject({ version: 2, rotated: true });
    // Retries after the rotation (window 0: no overlap) carry the old version's signature only.
    const sent = (await r.waitForRequests(before + 2)).slice(before);
    for (const req of sent) {
      expect(verifies(OLD, req)).toBe(true);
      expect(verifies(NEW, req)).toBe(false);
      expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(1);
    }
    fail = false;
    await waitFor(async () => (await t.call('listMessages', { limit: 1 })).items[0]?.urls[0]?.state === 'delivered', 'delivered');

    // A call after the rotation: the new version.
    const src = await sourceOf(t);
    await t.call('updateSource', { id: src.id, webhooks: { ...src.webhooks, urls: [{ url: `${r.url}/second`, headers: {} }] } });
    await t.post('/v1/track', { userId: 'u1', event: 'After' }, { writeKey: KEY });
    const after = await waitFor(() => r.requests.find((x) => x.url === '/second'), 'the new delivery');
    expect(verifies(NEW, after)).toBe(true);
    expect(verifies(OLD, after)).toBe(false);
  });

  it('during the window both signatures go out, each verifying with its own secret; after it, only the new one', async () => {
    const r = await lab.receiver();
    const t = await lab.start({ config: config(`${r.url}/hook`, { secretRotationWindowMs: 3_600_000 }) });
    const src = await sourceOf(t);
    await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: NEW });

    await t.post('/v1/track', { userId: 'u1', event: 'In the window' }, { writeKey: KEY });
    const [during] = await r.waitForRequests(1);
    const sigs = eachSignature(during);
    expect(sigs).toHaveLength(2);
    // Newest first; each signature verifies with its own secret only, and the request with either.
    expect(sigs.map((s) => [verifies(NEW, s), verifies(OLD, s)])).toEqual([[true, false], [false, true]]);
    expect(verifies(NEW, during) && verifies(OLD, during)).toBe(true);
    // The attempt records what was sent.
    const d = await t.call('getMessage', { id: (await t.call('listMessages', { limit: 1 })).items[0].id });
    await waitFor(async () => (await t.call('getMessage', { id: d.call.id })).deliveries[0].attempts.length === 1, 'attempt recorded');
    const recorded = (await t.call('getMessage', { id: d.call.id })).deliveries[0].attempts[0];
    expect(recorded.requestHeaders['webhook-signature']).toBe(during.headers['webhook-signature']);

    // The window is a setting, read as each attempt is signed: shortened to 1 ms, it is over.
    await t.call('updateSettings', { secretRotationWindowMs: 1 });
    await t.post('/v1/track', { userId: 'u1', event: 'After the window' }, { writeKey: KEY });
    const [, after] = await r.waitForRequests(2);
    expect(eachSignature(after)).toHaveLength(1);
    expect(verifies(NEW, after)).toBe(true);
    expect(verifies(OLD, after)).toBe(false);
  });

  it('keeps the old version while a delivery still needs it and drops it once that delivery is finished', async () => {
    let fail = true;
    const r = await lab.receiver((_req, res) => void res.writeHead(fail ? 503 : 200).end());
    let store!: Store;
    const t = await lab.start({
      config: config(`${r.url}/hook`, { secretRotationWindowMs: 0, retrySchedule: { preset: 'custom', delaysMs: [200], jitter: 0, windowMs: 3_600_000 } }),
      onStore: (s) => (store = s),
    });
    await t.post('/v1/track', { userId: 'u1', event: 'Held' }, { writeKey: KEY });
    await r.waitForRequests(1);
    await t.call('rotateSecret', { id: (await sourceOf(t)).id, which: 'standardWebhooksSecret', secret: NEW });
    await r.waitForRequests(r.requests.length + 2);
    // Pruned now, the old version stays: the retrying delivery names it.
    expect(store.sources.secrets.prune(Date.now(), 0)).toBe(0);
    expect(versionsIn(t).filter((v) => v.kind === 'standard')).toEqual([{ kind: 'standard', version: 1, retired: true }, { kind: 'standard', version: 2, retired: false }]);
    expect(verifies(OLD, r.requests[r.requests.length - 1])).toBe(true);

    fail = false;
    await waitFor(async () => (await t.call('listMessages', { limit: 1 })).items[0]?.urls[0]?.state === 'delivered', 'delivered');
    // The store's own check (every second) drops it.
    await waitFor(() => versionsIn(t).filter((v) => v.kind === 'standard').length === 1, 'the old version dropped');
    expect(versionsIn(t)).toEqual([{ kind: 'shared', version: 1, retired: false }, { kind: 'standard', version: 2, retired: false }]);
    // Its number and time stay, so an older call can be told "signed with version 1, since retired".
    expect(store.sources.secrets.versionAt((await sourceOf(t)).id, 'standard', Date.now() - 1)).toEqual({ version: 2, kept: true });
    expect(store.sources.secrets.keeps((await sourceOf(t)).id, 'standard', 1)).toBe(false);
    const db = new Database(join(t.dataDir, 'webhook-lab.db'), { readonly: true });
    expect(db.prepare("SELECT version, secret FROM source_secrets WHERE kind = 'standard' ORDER BY version").all()).toEqual([{ version: 1, secret: '' }, { version: 2, secret: NEW }]);
    db.close();
  });

  it('rotates the Classic shared secret: new deliveries sign X-Signature with it, a delivery made before keeps its own', async () => {
    const r = await lab.receiver();
    const t = await lab.start({ config: config(`${r.url}/hook`) });
    const src = await sourceOf(t);
    const rotated = await t.call('rotateSecret', { id: src.id, which: 'sharedSecret' });
    const fresh = rotated.webhooks.sharedSecret!;
    expect(fresh).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated.secretVersions?.sharedSecret?.version).toBe(2);
    await t.post('/v1/track', { userId: 'u1', event: 'Rotated' }, { writeKey: KEY });
    const [req] = await r.waitForRequests(1);
    expect(req.headers['x-signature']).toBe(createHmac('sha1', fresh).update(req.body).digest('hex'));
    // A random Standard Webhooks secret is a whsec_ of 32 bytes.
    const sw = await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret' });
    expect(Buffer.from(sw.webhooks.standardWebhooksSecret!.slice('whsec_'.length), 'base64')).toHaveLength(32);
  });

  it("an older call is verified against the version that signed it while the lab keeps it, and named 'since retired' once erased", async () => {
    const r = await lab.receiver();
    let store!: Store;
    const t = await lab.start({ config: config(`${r.url}/hook`), onStore: (s) => (store = s) });
    const src = await sourceOf(t);
    await t.post('/v1/track', { userId: 'u1', event: 'Before' }, { writeKey: KEY });
    await r.waitForRequests(1);
    const before = (await t.call('listMessages', { limit: 1 })).items[0]!;
    await waitFor(async () => (await t.call('getMessage', { id: before.id })).deliveries[0]?.attempts.length === 1, 'its attempt recorded');
    const first = (await t.call('getMessage', { id: before.id })).deliveries[0]!.attempts[0]!;
    const attemptId = first.id;
    // A scheduled attempt keeps where it fell in the schedule's time: the first, at its start.
    expect(first.simOffsetMs).toBe(0);
    await t.call('rotateSecret', { id: src.id, which: 'sharedSecret' });
    await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: NEW });
    // Kept (the rotation window): both signatures traced to version 1, without giving a secret.
    const kept = await t.call('verifySignature', { callId: before.id, attemptId });
    expect(kept.classic).toMatchObject({ state: 'valid', matched: { version: 1, current: false, given: false } });
    expect(kept.standardWebhooks?.signatures.map((x) => x.matched?.version)).toEqual([1]);
    expect(kept.madeWith).toEqual({ sharedSecret: { version: 1, kept: true }, standardWebhooksSecret: { version: 1, kept: true } });
    // A replay of that call now is signed with the secrets current now: version 2, and named so.
    await t.call('replayMessage', { id: before.id });
    await waitFor(async () => (await t.call('getMessage', { id: before.id })).deliveries[0]?.attempts.length === 2, 'the replay recorded');
    const replayed = (await t.call('getMessage', { id: before.id })).deliveries[0]!.attempts[1]!;
    expect(replayed.trigger).toBe('replay');
    expect(replayed.simOffsetMs).toBeUndefined();
    const again = await t.call('verifySignature', { callId: before.id, attemptId: replayed.id });
    expect(again.classic).toMatchObject({ state: 'valid', matched: { version: 2, current: true } });
    expect(again.madeWith).toEqual({ sharedSecret: { version: 2, kept: true }, standardWebhooksSecret: { version: 2, kept: true } });
    // The window closed and nothing needs them: their secrets are erased, their numbers stay.
    await t.call('updateSettings', { secretRotationWindowMs: 0 });
    store.sources.secrets.prune(Date.now(), 0);
    const gone = await t.call('verifySignature', { callId: before.id, attemptId });
    expect(gone.classic).toMatchObject({ state: 'invalid', matched: null });
    expect(gone.versionsTried).toEqual({ sharedSecret: [2], standardWebhooksSecret: [2] });
    expect(gone.madeWith).toEqual({ sharedSecret: { version: 1, kept: false }, standardWebhooksSecret: { version: 1, kept: false } });
    // A call after the rotation: version 2, kept.
    await t.post('/v1/track', { userId: 'u1', event: 'After' }, { writeKey: KEY });
    await r.waitForRequests(2);
    const after = (await t.call('listMessages', { limit: 1 })).items[0]!;
    await waitFor(async () => (await t.call('getMessage', { id: after.id })).deliveries[0]?.attempts.length === 1, 'its attempt recorded');
    const afterAttempt = (await t.call('getMessage', { id: after.id })).deliveries[0]!.attempts[0]!.id;
    const now = await t.call('verifySignature', { callId: after.id, attemptId: afterAttempt });
    expect(now.classic).toMatchObject({ state: 'valid', matched: { version: 2, current: true } });
    expect(now.madeWith).toEqual({ sharedSecret: { version: 2, kept: true }, standardWebhooksSecret: { version: 2, kept: true } });
  });

  it('a Standard Webhooks rotation without overlap (a leaked secret) stops the old version at once', async () => {
    const r = await lab.receiver();
    const t = await lab.start({ config: config(`${r.url}/hook`) });
    const rotated = await t.call('rotateSecret', { id: (await sourceOf(t)).id, which: 'standardWebhooksSecret', secret: NEW, overlap: false });
    expect(rotated.secretVersions?.standardWebhooksSecret).toMatchObject({ version: 2, rotated: false });
    await t.post('/v1/track', { userId: 'u1', event: 'Leaked' }, { writeKey: KEY });
    const [req] = await r.waitForRequests(1);
    expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(NEW, req)).toBe(true);
    expect(verifies(OLD, req)).toBe(false);
  });

  it('refuses a rotation naming the field: no secret to rotate, a bad whsec_, an unknown source', async () => {
    const r = await lab.receiver();
    const t = await lab.start({ config: { sources: [{ name: 'bare', writeKey: KEY, webhooks: { enabled: true, urls: [{ url: `${r.url}/hook`, headers: {} }] } }] } });
    const src = await sourceOf(t);
    await expect(t.call('rotateSecret', { id: src.id, which: 'sharedSecret' })).rejects.toThrow(/sharedSecret: the source has none to rotate/);
    await expect(t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: 'nope' })).rejects.toThrow(/secret.*must start with "whsec_"/);
    await expect(t.call('rotateSecret', { id: src.id, which: 'password' as never })).rejects.toThrow(/which/);
    await expect(t.call('rotateSecret', { id: 'no-such-source', which: 'sharedSecret' })).rejects.toThrow(/not found/);
  });
});

describe('no secret in a delivery row', () => {
  it('deliveries, attempts and the sources row hold no secret (SQL over every column); the API still shows the source\'s secrets', async () => {
    let fail = true;
    const r = await lab.receiver((_req, res) => void res.writeHead(fail ? 500 : 200).end());
    const t = await lab.start({
      config: {
        sources: [{
          name: 'app', writeKey: KEY,
          webhooks: {
            enabled: true, mode: 'both', sharedSecret: SHARED, standardWebhooksSecret: OLD, urls: [{ url: `${r.url}/hook`, headers: {} }],
            mappings: [{ name: 'm', url: `${r.url}/actions`, trigger: { type: 'track' }, headers: {} }],
          },
        }],
        settings: { retrySchedule: { preset: 'custom', delaysMs: [200], jitter: 0, windowMs: 3_600_000 } },
      },
    });
    await t.post('/v1/track', { userId: 'u1', event: 'Secretless' }, { writeKey: KEY });
    await r.waitForRequests(3);
    await t.call('rotateSecret', { id: (await sourceOf(t)).id, which: 'standardWebhooksSecret', secret: NEW });
    fail = false;
    await waitFor(async () => (await t.call('listMessages', { limit: 1 })).items[0]?.urls.every((u) => u.state === 'delivered'), 'delivered');
    const db = new Database(join(t.dataDir, 'webhook-lab.db'), { readonly: true });
    try {
      for (const table of ['deliveries', 'attempts', 'sources']) {
        const rows = db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
        expect(rows.length, table).toBeGreaterThan(0);
        const text = rows.map((row) => Object.values(row).map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v))).join('\u0000')).join('\n');
        for (const secret of [SHARED, OLD, NEW, OLD.slice(6), NEW.slice(6)]) expect(text.includes(secret), `${table} holds ${secret}`).toBe(false);
      }
      const deliveries = db.prepare('SELECT kind, sw_id, sw_version FROM deliveries ORDER BY id').all();
      expect(deliveries).toEqual([
        { kind: 'classic', sw_id: expect.stringMatching(/^msg_/), sw_version: 1 },
        { kind: 'actions', sw_id: expect.stringMatching(/^msg_/), sw_version: 1 },
      ]);
    } finally {
      db.close();
    }
    expect((await sourceOf(t)).webhooks).toMatchObject({ sharedSecret: SHARED, standardWebhooksSecret: NEW });
  });
});

describe('config export and import', () => {
  it('the export carries the current secrets and the window setting as before; importing it into a new lab signs with them', async () => {
    const r = await lab.receiver();
    const first = await lab.start({ config: config(`${r.url}/hook`, { secretRotationWindowMs: 7_200_000 }) });
    await first.call('rotateSecret', { id: (await sourceOf(first)).id, which: 'standardWebhooksSecret', secret: NEW });
    const exported = await first.call('getConfig', {});
    expect(exported.sources[0].webhooks).toMatchObject({ sharedSecret: SHARED, standardWebhooksSecret: NEW });
    expect(exported.sources[0]).not.toHaveProperty('secretVersions');
    expect(exported.settings.secretRotationWindowMs).toBe(7_200_000);

    const second = await lab.start();
    await second.call('importConfig', exported as never);
    const imported = await sourceOf(second);
    expect(imported.webhooks).toMatchObject({ sharedSecret: SHARED, standardWebhooksSecret: NEW });
    expect(imported.secretVersions?.standardWebhooksSecret).toMatchObject({ version: 1, rotated: false });
    expect((await second.call('getSettings', {})).secretRotationWindowMs).toBe(7_200_000);
    // Imported again unchanged: no new version.
    await second.call('importConfig', exported as never);
    expect((await sourceOf(second)).secretVersions?.standardWebhooksSecret?.version).toBe(1);
    await second.post('/v1/track', { userId: 'u1', event: 'Imported' }, { writeKey: KEY });
    const [req] = await r.waitForRequests(1);
    expect(verifies(NEW, req)).toBe(true);
    expect(req.headers['x-signature']).toBe(createHmac('sha1', SHARED).update(req.body).digest('hex'));
  });

  it('a secret set through the settings is a new version without a window; the old one is not sent', async () => {
    const r = await lab.receiver();
    const t = await lab.start({ config: config(`${r.url}/hook`, { secretRotationWindowMs: 3_600_000 }) });
    const src = await sourceOf(t);
    const updated = await t.call('updateSource', { id: src.id, webhooks: { ...src.webhooks, standardWebhooksSecret: NEW } });
    expect(updated.secretVersions?.standardWebhooksSecret).toMatchObject({ version: 2, rotated: false });
    await t.post('/v1/track', { userId: 'u1', event: 'Edited' }, { writeKey: KEY });
    const [req] = await r.waitForRequests(1);
    expect(eachSignature(req)).toHaveLength(1);
    expect(verifies(NEW, req)).toBe(true);
    // Cleared: no current version, no headers.
    const cleared = await t.call('updateSource', { id: src.id, webhooks: { ...src.webhooks, standardWebhooksSecret: undefined } });
    expect(cleared.webhooks.standardWebhooksSecret).toBeUndefined();
    expect(cleared.secretVersions?.standardWebhooksSecret ?? null).toBeNull();
  });
});

describe('receivers understand several signatures', () => {
  it('the lab\'s mock receivers judge a rotation window\'s request valid with the old secret and with the new one, invalid with another', async () => {
    const t = await lab.start();
    const other = `whsec_${Buffer.from('not either key, 24 bytes').toString('base64')}`;
    const receivers = await Promise.all(
      ([['old', OLD], ['new', NEW], ['other', other]] as const).map(([name, secret]) =>
        t.call('createReceiver', { name, path: `/${name}`, behavior: { status: 200 }, standardWebhooksSecret: secret }),
      ),
    );
    const source = await t.call('createSource', {
      name: 'app', writeKey: KEY,
      webhooks: { enabled: true, standardWebhooksSecret: OLD, urls: receivers.map((r) => ({ url: r.url, headers: {} })) },
    });
    await t.call('rotateSecret', { id: source.id, which: 'standardWebhooksSecret', secret: NEW });
    await t.post('/v1/track', { userId: 'u1', event: 'Both' }, { writeKey: KEY });
    const verdicts = await waitFor(async () => {
      const lists = await Promise.all(receivers.map((r) => t.call('listReceiverRequests', { id: r.id, limit: 10 })));
      return lists.every((l) => l.length === 1) ? lists.map((l) => [l[0].standardWebhooks?.state, String(l[0].standardWebhooks?.received).split(' ').length]) : undefined;
    }, 'each receiver got the call');
    expect(verdicts).toEqual([['valid', 2], ['valid', 2], ['invalid', 2]]);
  });
});

describe('webhook-lab/testing', () => {
  it('a delivery of a rotation window is signature-valid for a receiver holding the old secret and for one holding the new', async () => {
    const l = await startLab({
      sources: [{ name: 'app', webhooks: { standardWebhooksSecret: OLD } }],
      receivers: [
        { name: 'old', path: '/old', behavior: { status: 200 }, standardWebhooksSecret: OLD },
        { name: 'new', path: '/new', behavior: { status: 200 }, standardWebhooksSecret: NEW },
      ],
      ui: true,
    });
    try {
      const auth = { authorization: `Bearer ${l.token}`, 'content-type': 'application/json' };
      const [source] = (await (await fetch(`${l.apiUrl}/sources`, { headers: auth })).json()) as { id: string }[];
      const rotated = await fetch(`${l.apiUrl}/sources/${source.id}/rotate-secret`, { method: 'POST', headers: auth, body: JSON.stringify({ which: 'standardWebhooksSecret', secret: NEW }) });
      expect(rotated.status).toBe(200);
      const sent = await fetch(`${l.collectorUrl}/v1/track`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${l.writeKey}:`).toString('base64')}` },
        body: JSON.stringify({ userId: 'u1', event: 'Rotated' }),
      });
      expect(sent.status).toBe(200);
      for (const receiver of ['old', 'new']) {
        expect(await l.waitForDelivery({ receiver }), receiver).toMatchObject({ receiver, standardWebhooks: 'valid', signatureReason: null });
      }
    } finally {
      await l.stop();
    }
  });
});

// Reviewer's findings (issue 27): a short key through config import, how many signatures a
// rotation window sends, a secret rotated back to, and a window that closed staying closed.
const SHORT = 'whsec_YWJjZGU='; // 5 bytes
const THIRD = `whsec_${Buffer.from('the third key, 24 bytes!').toString('base64')}`;

describe('config import and short Standard Webhooks keys', () => {
  it('refuses a new short key for a stored source on its path; an unchanged stored one, or a new source\'s from an old file, is kept with a warning', async () => {
    const r = await lab.receiver();
    const dataDir = lab.dataDir();
    const t = await lab.start({ config: config(`${r.url}/hook`), dataDir });
    const file = config(`${r.url}/hook`);
    file.sources[0].webhooks.standardWebhooksSecret = SHORT;
    await expect(t.call('importConfig', file as never)).rejects.toMatchObject({
      status: 400,
      fields: [{ path: 'sources[0].webhooks.standardWebhooksSecret', message: expect.stringMatching(/24 to 64 random bytes.*refused/) }],
    });
    expect((await sourceOf(t)).webhooks.standardWebhooksSecret).toBe(OLD);
    await t.stop({ keepData: true });
    // serve --config with that file refuses to start, naming the path.
    await expect(lab.start({ config: file, dataDir })).rejects.toThrow(/sources\[0\]\.webhooks\.standardWebhooksSecret/);

    // A file written before the rule, into a new lab: the source is made with it, and a warning says so.
    const fresh = await lab.start();
    const applied = await fresh.call('importConfig', file as never);
    const short = (ws: { code: string }[]) => ws.filter((w) => w.code === 'short_standard_webhooks_key');
    expect(short(applied.warnings)).toEqual([expect.objectContaining({ path: 'sources[0].webhooks.standardWebhooksSecret', code: 'short_standard_webhooks_key' })]);
    expect((await sourceOf(fresh)).webhooks.standardWebhooksSecret).toBe(SHORT);
    // Applied again unchanged: still kept, still warned.
    const again = await fresh.call('importConfig', file as never);
    expect(short(again.warnings)).toHaveLength(1);
  });
});

describe('how many signatures a rotation window sends', () => {
  it('quick rotations send the current version and the one before it only; a delivery made with an older version still in its window adds its own', async () => {
    let fail = true;
    const r = await lab.receiver((req, res) => void res.writeHead(fail && req.url === '/held' ? 503 : 200).end());
    const t = await lab.start({
      config: config(`${r.url}/held`, { secretRotationWindowMs: 3_600_000, retrySchedule: { preset: 'custom', delaysMs: [300], jitter: 0, windowMs: 3_600_000 } }),
    });
    const src = await sourceOf(t);
    // A delivery made with version 1 keeps retrying across the rotations.
    await t.post('/v1/track', { userId: 'u1', event: 'Held' }, { writeKey: KEY });
    await r.waitForRequests(1);
    await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: NEW });
    for (let i = 0; i < 10; i++) await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret' });
    await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: THIRD });
    const before = r.requests.length;
    const [retry] = (await r.waitForRequests(before + 1)).slice(before);
    // Current (THIRD), the one before it (random), and the delivery's own version 1 (its window is open).
    expect(eachSignature(retry)).toHaveLength(3);
    expect(verifies(THIRD, retry) && verifies(OLD, retry)).toBe(true);
    fail = false;
    await waitFor(async () => (await t.call('listMessages', { limit: 1 })).items[0]?.urls[0]?.state === 'delivered', 'delivered');
    // A new delivery signs with the current version and the one before it: two values, not thirteen.
    await t.post('/v1/track', { userId: 'u1', event: 'New' }, { writeKey: KEY });
    const fresh = await waitFor(() => r.requests.find((q) => q.body.toString('utf8').includes('"New"')), 'the new delivery');
    expect(eachSignature(fresh)).toHaveLength(2);
    expect(verifies(THIRD, fresh)).toBe(true);
    expect(verifies(NEW, fresh)).toBe(false);
  });

  it('rotating back to an earlier secret sends its signature once', async () => {
    const r = await lab.receiver();
    const t = await lab.start({ config: config(`${r.url}/hook`, { secretRotationWindowMs: 3_600_000 }) });
    const src = await sourceOf(t);
    await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: NEW });
    await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: OLD });
    await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: NEW });
    await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: OLD });
    await t.post('/v1/track', { userId: 'u1', event: 'Back' }, { writeKey: KEY });
    const [req] = await r.waitForRequests(1);
    const sigs = String(req.headers['webhook-signature']).split(' ');
    expect(sigs).toHaveLength(2);
    expect(new Set(sigs).size).toBe(2);
    expect(verifies(OLD, req) && verifies(NEW, req)).toBe(true);
  });

  it('a window closed by setting it to 0 stays closed when the setting is raised again, whether or not the old version was dropped', async () => {
    const r = await lab.receiver();
    let store!: Store;
    const t = await lab.start({ config: config(`${r.url}/hook`, { secretRotationWindowMs: 3_600_000 }), onStore: (s) => (store = s) });
    const src = await sourceOf(t);
    await t.call('rotateSecret', { id: src.id, which: 'standardWebhooksSecret', secret: NEW });
    await waitFor(() => t.events.some((e) => e.type === 'sources.changed'), 'the rotation heard');
    await t.call('listSources', {});
    const seen = t.events.length;
    await t.call('updateSettings', { secretRotationWindowMs: 0 });
    // The UI hears that the sources changed (their version no longer says rotated).
    await waitFor(() => t.events.slice(seen).some((e) => e.type === 'sources.changed'), 'sources.changed after the window setting');
    await t.call('updateSettings', { secretRotationWindowMs: 3_600_000 });
    // Signed now (the store's check may or may not have dropped version 1 yet): the new secret only.
    expect(store.signingSecrets(src.id, 2, Date.now())).toEqual([NEW]);
    await t.post('/v1/track', { userId: 'u1', event: 'Closed' }, { writeKey: KEY });
    const [req] = await r.waitForRequests(1);
    expect(eachSignature(req)).toHaveLength(1);
    expect(verifies(OLD, req)).toBe(false);
    expect((await sourceOf(t)).secretVersions?.standardWebhooksSecret).toMatchObject({ version: 2, rotated: false });
  });
});
