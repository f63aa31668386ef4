import type { OpInput, OpName, OpOutput } from '../../shared/api.contract';
import { ApiError } from '../../shared/api-error';
import type { BridgeError, WebhookLabBridge } from '../../shared/bridge';
import type { Transport } from './transport.types';

// Desktop transport over the preload bridge. Failed calls reject with a plain BridgeError object
// (class instances lose their fields crossing contextBridge); it becomes an ApiError here so the
// screens handle both transports' failures the same way.

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err && typeof err === 'object' && typeof (err as BridgeError).status === 'number') {
    const e = err as Partial<BridgeError>;
    return ApiError.fromBody(e.status!, { error: e.error, fields: e.fields, code: e.code });
  }
  return new ApiError(500, err instanceof Error ? err.message : String(err));
}

export function createIpcTransport(bridge: WebhookLabBridge): Transport {
  return {
    kind: 'ipc',
    async call<K extends OpName>(name: K, input: OpInput<K>): Promise<OpOutput<K>> {
      try {
        return await bridge.call(name, input);
      } catch (err) {
        throw toApiError(err);
      }
    },
    async saveExport(input) {
      try {
        return await bridge.saveExport(input);
      } catch (err) {
        throw toApiError(err);
      }
    },
    subscribe: (listener) => bridge.onEvents(listener),
    // IPC is in-process: it is open for as long as the window exists.
    onStatus(listener) {
      listener('open');
      return () => {};
    },
  };
}
