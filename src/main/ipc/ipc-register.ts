import type { IpcMain, IpcMainInvokeEvent } from 'electron';
import { OP_NAMES, type ApiHandlers } from '../../shared/api.contract';
import { ipcChannel } from '../../shared/bridge';
import { failure, invokeOp, isTrustedSender, type RendererLocation, type SenderInfo } from './ipc-core';

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
): () => void {
  for (const name of OP_NAMES) {
    ipcMain.handle(ipcChannel(name), (event, payload: unknown) => {
      const sender = senderInfo(event);
      if (!isTrustedSender(sender, renderer)) {
        log(`refused IPC ${name} from ${sender.url ?? 'a destroyed frame'}`);
        return failure(403, 'IPC sender is not the Webhook Lab window');
      }
      return invokeOp(handlers, name, payload);
    });
  }
  return () => {
    for (const name of OP_NAMES) ipcMain.removeHandler(ipcChannel(name));
  };
}
