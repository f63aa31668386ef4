import { BrowserWindow, dialog, shell, type WebContents } from 'electron';
import { OP_NAMES } from '../../shared/api.contract';
import { opsArgument } from '../../shared/bridge';
import type { RendererLocation } from '../ipc/ipc-core';

// The one window, with Electron's secure defaults spelled out (they are the defaults today; saying
// so keeps a future edit from loosening them by accident) and every way off the app's page closed.

export interface WindowOptions {
  preloadFile: string;
  renderer: RendererLocation;
  title: string;
  /** Window and taskbar icon (Linux, Windows); macOS takes the bundle's. */
  icon?: string;
}

/** http(s) links go to the system browser; every other scheme (file:, javascript:, custom) is dropped. */
export function openExternally(url: string): void {
  try {
    const { protocol } = new URL(url);
    if (protocol === 'http:' || protocol === 'https:') shell.openExternal(url).catch(() => undefined);
  } catch {
    // Not a URL: nothing to open.
  }
}

/** Applied to every web contents the app creates (app 'web-contents-created'), this window's included. */
export function lockNavigation(contents: WebContents): void {
  contents.setWindowOpenHandler(({ url }) => {
    openExternally(url);
    return { action: 'deny' };
  });
  // Reloads do not emit will-navigate, so denying every navigation leaves the app's own page working.
  contents.on('will-navigate', (event, url) => {
    event.preventDefault();
    openExternally(url);
  });
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

export function createMainWindow(opts: WindowOptions): BrowserWindow {
  const win = new BrowserWindow({
    title: opts.title,
    ...(opts.icon ? { icon: opts.icon } : {}),
    width: 1360,
    height: 880,
    minWidth: 900,
    minHeight: 600,
    show: false,
    autoHideMenuBar: false,
    webPreferences: {
      preload: opts.preloadFile,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
      additionalArguments: [opsArgument(OP_NAMES)],
    },
  });
  win.once('ready-to-show', () => win.show());
  // The page cancels unloading only while it holds unsaved edits (renderer, leave-dialog.tsx). A
  // browser then asks; Electron asks nothing and keeps the window open, so it would not close or
  // reload at all: ask here, and let it go on Discard.
  win.webContents.on('will-prevent-unload', (event) => {
    const choice = dialog.showMessageBoxSync(win, {
      type: 'question',
      title: opts.title,
      message: 'Discard unsaved changes?',
      detail: 'Edits not saved yet are lost if the window closes or reloads.',
      buttons: ['Keep editing', 'Discard'],
      defaultId: 0,
      cancelId: 0,
    });
    if (choice === 1) event.preventDefault();
  });
  const loaded = opts.renderer.devServerUrl ? win.loadURL(opts.renderer.devServerUrl) : win.loadFile(opts.renderer.indexFile);
  loaded.catch((err: unknown) => console.error(`Webhook Lab: the window's page did not load: ${String(err)}`));
  return win;
}
