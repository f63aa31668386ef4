import type { EngineEvent, OpInput, OpName, OpOutput, SavedExport } from './api.contract';
import type { FieldError } from './validation-error';
import { codeOfStatus, type ErrorCode } from './error-codes';

export type { SavedExport };

// The desktop bridge: what the preload exposes as `window.webhookLab` and how its messages look on
// the IPC wire. Only type imports from the contract: the sandboxed preload cannot `require` packages
// such as zod, so nothing here may pull the schemas in at runtime.

/** What a failed call rejects with: a plain object (Error subclasses lose their fields crossing contextBridge). */
export interface BridgeError {
  status: number;
  /** What went wrong, for programs (ApiErrorBody.code); the same code the control API answers with. */
  code: ErrorCode;
  error: string;
  fields: FieldError[];
}

/** What every `api:<op>` IPC handler resolves with; handlers never throw across the boundary. */
export type IpcResult<T = unknown> = { ok: true; value: T } | ({ ok: false } & BridgeError);

export interface WebhookLabBridge {
  /** Runs one operation of the API contract in the main process. Rejects with a `BridgeError`. */
  call<K extends OpName>(name: K, input: OpInput<K>): Promise<OpOutput<K>>;
  /**
   * exportDeliveries written by the main process to a file the user picks in a save dialog, streamed
   * as it is read (nothing of it crosses IPC). Rejects with a `BridgeError`.
   */
  saveExport(input: OpInput<'exportDeliveries'>): Promise<SavedExport>;
  /** Engine events in batches; returns an unsubscribe function. */
  onEvents(listener: (events: EngineEvent[]) => void): () => void;
}

declare global {
  interface Window {
    /** Present in the desktop app only; web mode talks HTTP instead. */
    webhookLab?: WebhookLabBridge;
  }
}

export const IPC_OP_PREFIX = 'api:';
export const ipcChannel = (name: string): string => IPC_OP_PREFIX + name;
/** Channel of WebhookLabBridge.saveExport (not an operation: it opens a dialog and writes a file). */
export const IPC_SAVE_EXPORT_CHANNEL = 'export:save';
/** Channel on which the main process pushes engine event batches. */
export const IPC_EVENTS_CHANNEL = 'events';
/**
 * Command-line switch through which the main process hands the contract's op names to the preload
 * (BrowserWindow `additionalArguments`), so the list is generated from `OP_NAMES` without the
 * preload bundling the schemas.
 */
export const OPS_ARG_PREFIX = '--webhook-lab-ops=';

export function opsArgument(names: readonly string[]): string {
  return OPS_ARG_PREFIX + names.join(',');
}

export function opsFromArgv(argv: readonly string[]): Set<string> {
  const arg = argv.find((a) => a.startsWith(OPS_ARG_PREFIX));
  return new Set(arg ? arg.slice(OPS_ARG_PREFIX.length).split(',').filter(Boolean) : []);
}

/** The transport seam the preload wires to ipcRenderer; kept here so it runs (and is tested) without Electron. */
export interface BridgeTransport {
  invoke(channel: string, payload: unknown): Promise<unknown>;
  on(channel: string, listener: (payload: unknown) => void): () => void;
}

function bridgeError(status: number, error: string, fields: FieldError[] = [], code: ErrorCode = codeOfStatus(status)): BridgeError {
  return { status, code, error, fields };
}

function isIpcResult(v: unknown): v is IpcResult {
  return typeof v === 'object' && v !== null && typeof (v as { ok?: unknown }).ok === 'boolean';
}

export function createBridge(transport: BridgeTransport, opNames: ReadonlySet<string>): WebhookLabBridge {
  async function invoke(channel: string, label: string, payload: unknown): Promise<unknown> {
    let result: unknown;
    try {
      result = await transport.invoke(channel, payload ?? {});
    } catch (err) {
      // Only reached when IPC itself fails (no handler yet, window torn down); handlers never throw.
      throw bridgeError(500, err instanceof Error ? err.message : String(err));
    }
    if (!isIpcResult(result)) throw bridgeError(500, `malformed reply to ${label}`);
    if (result.ok) return result.value;
    throw bridgeError(result.status, result.error, result.fields ?? [], result.code ?? codeOfStatus(result.status));
  }
  return {
    async call(name, input) {
      if (typeof name !== 'string' || !opNames.has(name)) {
        // 404 not_found, as the main process (ipc-core) and the control API answer an unknown operation.
        throw bridgeError(404, `unknown operation: ${String(name)}`);
      }
      return (await invoke(ipcChannel(name), name, input)) as never;
    },
    async saveExport(input) {
      return (await invoke(IPC_SAVE_EXPORT_CHANNEL, 'saveExport', input)) as SavedExport;
    },
    onEvents(listener) {
      if (typeof listener !== 'function') throw new TypeError('onEvents expects a function');
      return transport.on(IPC_EVENTS_CHANNEL, (batch) => {
        if (Array.isArray(batch)) listener(batch as EngineEvent[]);
      });
    },
  };
}
