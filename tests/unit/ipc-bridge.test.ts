import { describe, expect, it } from 'vitest';
import { OP_NAMES } from '../../src/shared/api.contract';
import { createBridge, opsArgument, opsFromArgv, type BridgeTransport } from '../../src/shared/bridge';

// The preload's logic, driven through the same transport seam the preload wires to ipcRenderer.
function transport(reply: (channel: string, payload: unknown) => unknown) {
  const invoked: { channel: string; payload: unknown }[] = [];
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const t: BridgeTransport = {
    invoke: async (channel, payload) => {
      invoked.push({ channel, payload });
      return reply(channel, payload);
    },
    on(channel, listener) {
      if (!listeners.has(channel)) listeners.set(channel, new Set());
      listeners.get(channel)!.add(listener);
      return () => listeners.get(channel)!.delete(listener);
    },
  };
  const emit = (channel: string, payload: unknown) => listeners.get(channel)?.forEach((l) => l(payload));
  return { t, invoked, emit, listeners };
}

const names = opsFromArgv(['/path/electron', '--type=renderer', opsArgument(OP_NAMES)]);

describe('op names through argv', () => {
  it('round-trips the contract list and is empty without the switch', () => {
    expect([...names]).toEqual(OP_NAMES);
    expect(opsFromArgv(['--other']).size).toBe(0);
  });
});

describe('createBridge', () => {
  it('saves exports over export:save, unwrapping the result and rejecting with the BridgeError', async () => {
    const { t, invoked } = transport((_ch, payload) =>
      (payload as { status?: string }).status === 'bogus'
        ? { ok: false, status: 400, error: 'invalid', fields: [{ path: 'status', message: 'expected one of …' }] }
        : { ok: true, value: { saved: true, path: '/tmp/x.har', bytes: 12 } },
    );
    const bridge = createBridge(t, names);
    await expect(bridge.saveExport({ format: 'har' })).resolves.toEqual({ saved: true, path: '/tmp/x.har', bytes: 12 });
    await expect(bridge.saveExport({ format: 'har', status: 'bogus' })).rejects.toEqual({ status: 400, code: 'invalid_input', error: 'invalid', fields: [{ path: 'status', message: 'expected one of …' }] });
    expect(invoked.map((i) => i.channel)).toEqual(['export:save', 'export:save']);
  });

  it('invokes api:<name> and unwraps ok results', async () => {
    const { t, invoked } = transport(() => ({ ok: true, value: { id: 's1' } }));
    const bridge = createBridge(t, names);
    await expect(bridge.call('regenerateWriteKey', { id: 's1' })).resolves.toEqual({ id: 's1' });
    expect(invoked).toEqual([{ channel: 'api:regenerateWriteKey', payload: { id: 's1' } }]);
  });

  it('rejects with a plain {status, code, error, fields} object on failure results', async () => {
    const fields = [{ path: 'name', message: 'required' }];
    const { t } = transport(() => ({ ok: false, status: 400, code: 'invalid_input', error: 'name: required', fields }));
    const err = await createBridge(t, names).call('createSource', {} as never).catch((e: unknown) => e);
    expect(err).toEqual({ status: 400, code: 'invalid_input', error: 'name: required', fields });
    expect(Object.getPrototypeOf(err)).toBe(Object.prototype);
  });

  it("passes the main process's code through, and derives one from the status when a result has none", async () => {
    const coded = transport(() => ({ ok: false, status: 409, code: 'conflict', error: 'name: taken', fields: [] }));
    await expect(createBridge(coded.t, names).call('health', {})).rejects.toMatchObject({ status: 409, code: 'conflict' });
    const bare = transport(() => ({ ok: false, status: 404, error: 'not found: source s1', fields: [] }));
    await expect(createBridge(bare.t, names).call('health', {})).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('refuses names outside the list without touching IPC', async () => {
    const { t, invoked } = transport(() => ({ ok: true, value: 1 }));
    const bridge = createBridge(t, names);
    await expect(bridge.call('shutdown' as never, {} as never)).rejects.toEqual({ status: 404, code: 'not_found', error: 'unknown operation: shutdown', fields: [] });
    const empty = createBridge(t, new Set());
    await expect(empty.call('health', {})).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect(invoked).toEqual([]);
  });

  it('maps IPC failures and malformed replies to status 500', async () => {
    const failing = transport(() => {
      throw new Error("No handler registered for 'api:health'");
    });
    await expect(createBridge(failing.t, names).call('health', {})).rejects.toEqual({
      status: 500,
      code: 'internal',
      error: "No handler registered for 'api:health'",
      fields: [],
    });
    const odd = transport(() => 'surprise');
    await expect(createBridge(odd.t, names).call('health', {})).rejects.toMatchObject({ status: 500, error: 'malformed reply to health' });
  });

  it('sends {} when input is omitted', async () => {
    const { t, invoked } = transport(() => ({ ok: true, value: null }));
    await createBridge(t, names).call('health', undefined as never);
    expect(invoked[0].payload).toEqual({});
  });

  it('delivers event batches and stops after unsubscribe', () => {
    const { t, emit, listeners } = transport(() => null);
    const got: unknown[] = [];
    const off = createBridge(t, names).onEvents((batch) => got.push(batch));
    emit('events', [{ type: 'sources.changed' }]);
    emit('events', 'not a batch');
    off();
    emit('events', [{ type: 'sources.changed' }]);
    expect(got).toEqual([[{ type: 'sources.changed' }]]);
    expect(listeners.get('events')!.size).toBe(0);
  });
});
