import { describe, expect, it } from 'vitest';
import { createIpcTransport } from '../../src/renderer/api/ipc-transport';
import { ApiError } from '../../src/shared/api-error';
import { createBridge, IPC_EVENTS_CHANNEL, type BridgeTransport } from '../../src/shared/bridge';
import type { EngineEvent } from '../../src/shared/api.contract';

// The desktop transport over the real bridge code (src/shared/bridge.ts); only ipcRenderer itself,
// which needs Electron, is replaced by an in-process channel with the same invoke/on shape.

function channel(reply: (ch: string, payload: unknown) => unknown) {
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const t: BridgeTransport = {
    invoke: async (ch, payload) => reply(ch, payload),
    on(ch, l) {
      if (!listeners.has(ch)) listeners.set(ch, new Set());
      listeners.get(ch)!.add(l);
      return () => listeners.get(ch)!.delete(l);
    },
  };
  const emit = (ch: string, p: unknown) => listeners.get(ch)?.forEach((l) => l(p));
  return { t, emit };
}

const OPS = new Set(['health', 'updateSource']);

describe('IPC transport', () => {
  it('saves exports through the bridge, its failures as ApiError', async () => {
    const { t } = channel((_ch, payload) =>
      (payload as { format: string }).format === 'har'
        ? { ok: true, value: { saved: false } }
        : { ok: false, status: 500, error: "ENOENT: no such file or directory, open '/gone/x.jsonl'", fields: [] },
    );
    const api = createIpcTransport(createBridge(t, OPS));
    expect(await api.saveExport!({ format: 'har' })).toEqual({ saved: false });
    const err = await api.saveExport!({ format: 'jsonl' }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 500, message: expect.stringContaining('ENOENT') });
  });

  it('returns values and turns failed calls into ApiError with field messages', async () => {
    const { t } = channel((ch, payload) =>
      ch === 'api:health'
        ? { ok: true, value: { ok: true, payload } }
        : { ok: false, status: 400, code: 'invalid_input', error: 'invalid', fields: [{ path: 'webhooks.urls[0].url', message: 'must be an absolute http: or https: URL' }] },
    );
    const api = createIpcTransport(createBridge(t, OPS));
    expect(await api.call('health', {})).toEqual({ ok: true, payload: {} });
    const err = await api.call('updateSource', { id: 's' }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_input');
    expect(err.fieldMessage('webhooks.urls[0].url')).toBe('must be an absolute http: or https: URL');
    const unknown = await api.call('listSources', {}).catch((e) => e);
    expect(unknown).toMatchObject({ status: 404, code: 'not_found', message: 'unknown operation: listSources' });
  });

  it('passes event batches through and reports itself open', () => {
    const { t, emit } = channel(() => ({ ok: true, value: null }));
    const api = createIpcTransport(createBridge(t, OPS));
    const got: EngineEvent[][] = [];
    const un = api.subscribe((e) => got.push(e));
    emit(IPC_EVENTS_CHANNEL, [{ type: 'sources.changed' }]);
    un();
    emit(IPC_EVENTS_CHANNEL, [{ type: 'sources.changed' }]);
    expect(got).toEqual([[{ type: 'sources.changed' }]]);
    let status = '';
    api.onStatus((s) => (status = s));
    expect(status).toBe('open');
  });
});
