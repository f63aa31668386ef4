import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngine } from '../../src/main/engine/engine';
import type { Engine } from '../../src/main/engine/engine.types';
import type { EngineEvent } from '../../src/shared/api.contract';
import type { Source } from '../../src/shared/types';
import { createEventForwarder, invokeOp } from '../../src/main/ipc/ipc-core';
import { saveExport } from '../../src/main/ipc/ipc-export';

// The IPC adapter over the real engine (temp SQLite file, collector on a free loopback port):
// what the desktop window gets back for successes, schema failures and the engine's own errors.

let engine: Engine;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'wl-ipc-engine-'));
  engine = await startEngine({ dataDir, collectorPort: 0 });
});

afterAll(async () => {
  await engine?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('IPC adapter over the engine', () => {
  it('creates a source and reports its change as an event batch', async () => {
    const batches: EngineEvent[][] = [];
    const forwarder = createEventForwarder((b) => batches.push(b), 20);
    const off = engine.onEvents((events) => forwarder.push(events));
    try {
      const r = await invokeOp(engine.handlers, 'createSource', { name: 'checkout' });
      expect(r.ok).toBe(true);
      if (!r.ok) return;
      const source = r.value as Source;
      expect(source.name).toBe('checkout');
      expect(source.writeKey).toBeTruthy();
      await expect.poll(() => batches.flat().some((e) => e.type === 'sources.changed')).toBe(true);
    } finally {
      off();
      forwarder.dispose();
    }
  });

  it('reports a bad webhook URL on its field path, before the engine sees it', async () => {
    const created = await invokeOp(engine.handlers, 'createSource', { name: 'billing' });
    expect(created.ok).toBe(true);
    const source = (created as { value: Source }).value;
    const r = await invokeOp(engine.handlers, 'updateSource', {
      id: source.id,
      webhooks: { enabled: true, urls: [{ url: 'ftp://example.com/hook' }] },
    });
    expect(r).toMatchObject({ ok: false, status: 400 });
    if (r.ok) return;
    expect(r.fields.map((f) => f.path)).toContain('webhooks.urls[0].url');
  });

  it("passes the engine's own not-found errors through with their status", async () => {
    expect(await invokeOp(engine.handlers, 'getMessage', { id: 987654 })).toMatchObject({ ok: false, status: 404 });
    expect(await invokeOp(engine.handlers, 'regenerateWriteKey', { id: 'no-such-source' })).toMatchObject({ ok: false, status: 404 });
  });

  it('answers health with the data folder and collector URL', async () => {
    const r = await invokeOp(engine.handlers, 'health', undefined);
    expect(r).toMatchObject({ ok: true, value: { ok: true, dataDir, collectorUrl: engine.collectorUrl } });
  });
});

describe('export to a file (the desktop window)', () => {
  it('streams the file to the chosen path: the same text as the operation; cancel, bad input and write errors', async () => {
    const created = await invokeOp(engine.handlers, 'createSource', { name: 'exported', writeKey: 'wk_exported' });
    expect(created.ok).toBe(true);
    const batch = Array.from({ length: 450 }, (_, i) => ({ type: 'track', userId: `u${i}`, event: 'Saved', messageId: `save-${i}` }));
    const res = await fetch(`${engine.collectorUrl}/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('wk_exported:').toString('base64')}` }, body: JSON.stringify({ batch }) });
    expect(res.status).toBe(200);

    const dir = mkdtempSync(join(tmpdir(), 'wl-ipc-export-'));
    try {
      const asked: string[] = [];
      const target = join(dir, 'saved.jsonl');
      const saved = await saveExport(engine.openExport, { format: 'jsonl', q: 'Saved', limit: 1000 }, async (name) => (asked.push(name), target));
      const op = await invokeOp(engine.handlers, 'exportDeliveries', { format: 'jsonl', q: 'Saved', limit: 1000 });
      expect(op.ok).toBe(true);
      const content = (op as { value: { content: string } }).value.content;
      expect(content.split('\n').filter(Boolean)).toHaveLength(450);
      expect(saved).toEqual({ ok: true, value: { saved: true, path: target, bytes: Buffer.byteLength(content) } });
      expect(readFileSync(target, 'utf8')).toBe(content);
      expect(asked[0]).toMatch(/^webhook-lab-.+\.jsonl$/);

      // Cancelled: nothing written. A bad filter: refused on its field before any dialog.
      expect(await saveExport(engine.openExport, { format: 'har' }, async () => null)).toEqual({ ok: true, value: { saved: false } });
      let dialogs = 0;
      const bad = await saveExport(engine.openExport, { format: 'har', status: 'bogus' }, async () => (dialogs++, join(dir, 'x.har')));
      expect(bad).toMatchObject({ ok: false, status: 400, fields: [{ path: 'status' }] });
      expect(await saveExport(engine.openExport, { limit: 5 }, async () => (dialogs++, join(dir, 'x.har')))).toMatchObject({ ok: false, status: 400, fields: [{ path: 'format' }] });
      expect(dialogs).toBe(0);
      expect(existsSync(join(dir, 'x.har'))).toBe(false);
      // A path that cannot be written (its folder is gone): a clear failure, not a crash.
      const unwritable = await saveExport(engine.openExport, { format: 'har' }, async () => join(dir, 'missing', 'x.har'));
      expect(unwritable).toMatchObject({ ok: false, status: 500, error: expect.stringContaining('ENOENT') });
      // Failing halfway (here the reading side): the failure is reported and no half file is left.
      const half = join(dir, 'half.jsonl');
      const failing = () => ({
        filename: 'half.jsonl',
        contentType: 'application/x-ndjson',
        chunks: (async function* () {
          yield '{"call":1}\n';
          throw new Error('database is closed');
        })(),
      });
      expect(await saveExport(failing, { format: 'jsonl' }, async () => half)).toMatchObject({ ok: false, status: 500, error: 'database is closed' });
      expect(existsSync(half)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
