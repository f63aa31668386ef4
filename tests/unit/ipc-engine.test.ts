import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngine } from '../../src/main/engine/engine';
import type { Engine } from '../../src/main/engine/engine.types';
import type { EngineEvent } from '../../src/shared/api.contract';
import type { Source } from '../../src/shared/types';
import { createEventForwarder, invokeOp } from '../../src/main/ipc/ipc-core';

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
