import { contextBridge, ipcRenderer } from 'electron';
import { createBridge, opsFromArgv } from '../shared/bridge';

// Sandboxed preload: only `electron` may be required here, so the op names come from the main
// process (generated from the contract's OP_NAMES) through a command-line switch. ipcRenderer
// itself is never exposed; the page gets two functions and nothing else.

const bridge = createBridge(
  {
    invoke: (channel, payload) => ipcRenderer.invoke(channel, payload),
    on(channel, listener) {
      const handler = (_event: Electron.IpcRendererEvent, payload: unknown) => listener(payload);
      ipcRenderer.on(channel, handler);
      return () => {
        ipcRenderer.removeListener(channel, handler);
      };
    },
  },
  opsFromArgv(process.argv),
);

contextBridge.exposeInMainWorld('webhookLab', {
  call: (name: string, input: unknown) => bridge.call(name as never, input as never),
  saveExport: (input: unknown) => bridge.saveExport(input as never),
  onEvents: (listener: Parameters<typeof bridge.onEvents>[0]) => bridge.onEvents(listener),
});
