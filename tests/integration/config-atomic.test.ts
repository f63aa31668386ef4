import { afterEach, describe, expect, it } from 'vitest';
import { startControlServer } from '../../src/main/server/control-server';
import type { TestEngine } from '../helpers/engine';
import { openDbFile } from '../helpers/db-file';
import { testLab } from '../helpers/test-lab';

// Issue 22, item 3: POST /api/config with a new source followed by one whose write key is taken
// answered 409 but kept the first source. A config is checked whole against what is stored and
// applied in one SQLite transaction, or not at all, every problem named by its field path. Real
// sockets (the control API), a real SQLite file (read beside the engine to prove nothing landed).

const lab = testLab();
const TOKEN = 'config-atomic-token';
let control: Awaited<ReturnType<typeof startControlServer>> | undefined;

afterEach(async () => {
  await control?.app.close();
  control = undefined;
});

async function start(config?: unknown): Promise<TestEngine> {
  const t = await lab.start({ config });
  control = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  return t;
}

async function postConfig(body: unknown): Promise<{ status: number; json: { error: string; code: string; fields?: { path: string; message: string }[] } }> {
  const res = await fetch(`${control!.url}/api/config`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as never };
}

/** Every row a config can write, read from the SQLite file itself. */
export function configRows(dataDir: string): Record<string, unknown[]> {
  const db = openDbFile(dataDir);
  try {
    return {
      sources: db.prepare('SELECT id, name, write_key, webhooks FROM sources ORDER BY id').all(),
      settings: db.prepare('SELECT key, value FROM settings ORDER BY key').all(),
      receivers: db.prepare('SELECT id, name, definition FROM mock_receivers ORDER BY id').all(),
      audiences: db.prepare('SELECT id, name, key, definition, source_ids, sync_interval_ms FROM audiences ORDER BY id').all(),
    };
  } finally {
    db.close();
  }
}

const rule = { combine: 'and', conditions: [{ kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' }] };

describe('POST /api/config is all or nothing', () => {
  it('a new source followed by one whose write key is taken: 409 naming sources[1].writeKey, and no source is added', async () => {
    const t = await start({ sources: [{ name: 'old', writeKey: 'wk_taken' }] });
    const before = configRows(t.dataDir);
    const r = await postConfig({ sources: [{ name: 'first-new', writeKey: 'wk_first' }, { name: 'second-new', writeKey: 'wk_taken' }] });
    expect([r.status, r.json.code]).toEqual([409, 'conflict']);
    expect(r.json.fields).toEqual([{ path: 'sources[1].writeKey', message: 'already used by source "old"' }]);
    expect(r.json.error).toBe('sources[1].writeKey: already used by source "old"');
    expect(configRows(t.dataDir)).toEqual(before);
    expect((await t.call('listSources', {})).map((s) => s.name)).toEqual(['old']);
    // The key of the source that was refused works as before, and the first one does not exist.
    expect((await t.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: 'wk_first' })).status).toBe(200);
    expect((await t.call('listMessages', {})).items[0]).toMatchObject({ status: 'dropped' });
  });

  it('settings, receivers, sources and audiences: one problem anywhere changes none of them, and every problem is named', async () => {
    const t = await start({
      sources: [{ name: 'crm', writeKey: 'wk_crm' }],
      mockReceivers: [{ name: 'existing', path: '/existing' }],
      audiences: [{ name: 'Power Users', rule, sources: ['crm'] }],
    });
    const before = configRows(t.dataDir);
    const r = await postConfig({
      sources: [{ name: 'brand-new' }, { name: 'crm', writeKey: 'wk_crm_rotated' }],
      settings: { timeScale: 50, payloadFormat: 'documented' },
      mockReceivers: [{ name: 'new-one', path: '/new-one' }, { name: 'thief', path: '/existing' }],
      audiences: [
        { name: 'Fresh', rule, sources: ['brand-new', 'crm'] },
        { name: 'power-users', rule, sources: ['crm'] },
        { name: 'Orphan', rule, sources: ['nowhere'] },
      ],
    });
    expect(r.status).toBe(409);
    expect(r.json.fields).toEqual([
      { path: 'mockReceivers[1].path', message: '"/existing" is used by receiver "existing"' },
      { path: 'audiences[1].name', message: 'its key "power_users" is already used by "Power Users"' },
      { path: 'audiences[2].sources[0]', message: 'no source named "nowhere"' },
    ]);
    expect(configRows(t.dataDir)).toEqual(before);
    expect((await t.call('getSettings', {})).timeScale).toBe(1);
    expect((await t.call('listSources', {})).find((s) => s.name === 'crm')?.writeKey).toBe('wk_crm');
    expect((await t.call('listReceivers', {})).map((x) => x.name)).toEqual(['existing']);
    expect((await t.call('listAudiences', {})).map((a) => a.name)).toEqual(['Power Users']);
  });

  it('a problem only within the file (an unknown source name) is a 400; nothing is written either', async () => {
    const t = await start();
    const before = configRows(t.dataDir);
    const r = await postConfig({ sources: [{ name: 'made' }], audiences: [{ name: 'A', rule, sources: ['made', 'missing'] }, { name: 'a', rule, sources: ['made'] }] });
    expect([r.status, r.json.code]).toEqual([400, 'invalid_input']);
    expect(r.json.fields).toEqual([
      { path: 'audiences[0].sources[1]', message: 'no source named "missing"' },
      { path: 'audiences[1].name', message: 'its key "a" is also the key of "A"' },
    ]);
    expect(configRows(t.dataDir)).toEqual(before);
  });

  it('a write that fails half-way (the audiences table refuses) rolls back the sources and settings written before it, on disk and in memory', async () => {
    const t = await start({ sources: [{ name: 'old', writeKey: 'wk_old' }] });
    const before = configRows(t.dataDir);
    const db = openDbFile(t.dataDir, { write: true });
    try {
      db.exec("CREATE TRIGGER refuse_audiences BEFORE INSERT ON audiences BEGIN SELECT RAISE(ABORT, 'injected write failure'); END");
    } finally {
      db.close();
    }
    const r = await postConfig({
      sources: [{ name: 'new', writeKey: 'wk_new' }, { name: 'old', writeKey: 'wk_old_rotated' }],
      settings: { timeScale: 7 },
      audiences: [{ name: 'Pro', rule, sources: ['new'] }],
    });
    expect(r.status).toBe(500);
    expect(r.json.error).toContain('injected write failure');
    expect(configRows(t.dataDir)).toEqual(before);
    expect((await t.call('listSources', {})).map((s) => [s.name, s.writeKey])).toEqual([['old', 'wk_old']]);
    expect((await t.call('getSettings', {})).timeScale).toBe(1);
    // The collector knows the keys as stored: the old one still works, the new ones are unknown.
    expect((await t.post('/v1/track', { userId: 'u', event: 'E', messageId: 'm-old-key' }, { writeKey: 'wk_old' })).status).toBe(200);
    expect((await t.call('listMessages', { q: 'm-old-key' })).items[0]).toMatchObject({ status: 'accepted' });
    expect((await t.post('/v1/track', { userId: 'u', event: 'E', messageId: 'm-new-key' }, { writeKey: 'wk_new' })).status).toBe(200);
    expect((await t.call('listMessages', { q: 'm-new-key' })).items[0]).toMatchObject({ status: 'dropped', sourceId: null });
  });

  it('the same file applies whole, and again changes nothing (idempotent, by name)', async () => {
    const t = await start({ sources: [{ name: 'old', writeKey: 'wk_old' }] });
    const config = {
      sources: [{ name: 'a', writeKey: 'wk_a' }, { name: 'old', writeKey: 'wk_old_rotated' }],
      settings: { timeScale: 5 },
      mockReceivers: [{ name: 'r', path: '/r' }],
      audiences: [{ name: 'Pro', rule, sources: ['a', 'old'] }],
    };
    const r = await postConfig(config);
    expect([r.status, r.json]).toEqual([200, { ok: true, sources: 2, mockReceivers: 1, audiences: 1, warnings: [] }]);
    const after = configRows(t.dataDir);
    expect(after.sources.map((s) => (s as { write_key: string }).write_key).sort()).toEqual(['wk_a', 'wk_old_rotated']);
    expect((await postConfig(config)).status).toBe(200);
    expect(configRows(t.dataDir)).toEqual(after);
    expect((await t.call('listReceivers', {})).map((x) => x.name)).toEqual(['r']);
    // The rotated key is the one the collector knows now.
    expect((await t.post('/v1/track', { userId: 'u', event: 'E', messageId: 'm-rot' }, { writeKey: 'wk_old_rotated' })).status).toBe(200);
    expect((await t.call('listMessages', { q: 'm-rot' })).items[0]).toMatchObject({ status: 'accepted', sourceId: expect.any(String) });
  });
});

describe('POST /api/config with a key given twice', () => {
  it('is a 400 naming the key and its line, as for a config file, and changes nothing', async () => {
    const t = await start({ sources: [{ name: 'kept', writeKey: 'wk_kept' }] });
    const before = configRows(t.dataDir);
    // JSON.parse would keep the second writeKey without a word.
    const text = '{\n  "sources": [\n    { "name": "twice", "writeKey": "wk_first",\n      "writeKey": "wk_second" }\n  ]\n}';
    const res = await fetch(`${control!.url}/api/config`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: text });
    expect(res.status).toBe(400);
    const json = (await res.json()) as { code: string; fields: { path: string; message: string }[] };
    expect(json.code).toBe('invalid_input');
    expect(json.fields).toEqual([{ path: 'sources[0].writeKey', message: 'duplicate key (line 4): JSON keeps only the last, so the first would be lost' }]);
    expect(configRows(t.dataDir)).toEqual(before);
    // Without a repeated key, the same route takes it.
    expect((await postConfig({ sources: [{ name: 'once', writeKey: 'wk_once' }] })).status).toBe(200);
  });
});
