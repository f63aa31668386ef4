import type { IpcMain, IpcMainInvokeEvent } from 'electron';
import { OP_NAMES, type ApiHandlers } from '../../shared/api.contract';
import { ipcChannel, IPC_SAVE_EXPORT_CHANNEL } from '../../shared/bridge';
import type { Engine } from '../engine/engine.types';
import { failure, invokeOp, isTrustedSender, type RendererLocation, type SenderInfo } from './ipc-core';
import { BodyPool } from '../server/body-pool';
import { saveExport } from './ipc-export';

/** The export-to-file channel: the engine's stream, and the save dialog (Electron's, from index.ts). */
export interface ExportToFile {
  open: Engine['openExport'];
  choosePath: (filename: string) => Promise<string | null>;
}

// One `api:<op>` channel per operation of the contract. Type-only import of electron: index.ts
// passes the real ipcMain in, so this module stays loadable under plain Node.

function senderInfo(event: IpcMainInvokeEvent): SenderInfo {
  try {
    const frame = event.senderFrame;
    return { url: frame?.url, topLevel: frame != null && frame.parent === null };
  } catch {
    // The frame was destroyed mid-call (navigation, window closing).
    return { url: undefined, topLevel: false };
  }
}

export function registerIpcHandlers(
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>,
  handlers: ApiHandlers,
  renderer: RendererLocation,
  log: (line: string) => void = () => {},
  exportToFile?: ExportToFile,
): () => void {
  const refused = (event: IpcMainInvokeEvent, what: string) => {
    const sender = senderInfo(event);
    if (isTrustedSender(sender, renderer)) return null;
    log(`refused IPC ${what} from ${sender.url ?? 'a destroyed frame'}`);
    return failure(403, 'IPC sender is not the Webhook Lab window');
  };
  // Large payloads are checked in a worker, as the control API checks large bodies.
  const bodies = new BodyPool({ log });
  for (const name of OP_NAMES) {
    ipcMain.handle(ipcChannel(name), (event, payload: unknown) => refused(event, name) ?? invokeOp(handlers, name, payload, bodies));
  }
  if (exportToFile) {
    ipcMain.handle(IPC_SAVE_EXPORT_CHANNEL, (event, payload: unknown) => refused(event, 'saveExport') ?? saveExport(exportToFile.open, payload, exportToFile.choosePath));
  }
  return () => {
    bodies.close().catch(() => undefined);
    for (const name of OP_NAMES) ipcMain.removeHandler(ipcChannel(name));
    if (exportToFile) ipcMain.removeHandler(IPC_SAVE_EXPORT_CHANNEL);
  };
}
