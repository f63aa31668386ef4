import { app, clipboard, Menu, shell, type MenuItemConstructorOptions } from 'electron';

// The application menu, following macOS conventions (app menu first, Window and Help last) and the
// platform's usual roles and shortcuts elsewhere. Reload and DevTools exist only in development:
// a reload in the product would drop the inspector's state for no benefit.

export interface MenuContext {
  dev: boolean;
  dataDir: string;
  collectorUrl: string;
  /** The opt-in local API and MCP endpoint for agents (local-api.ts): whether it is on, and what the items do. */
  localApi?: { enabled: boolean; toggle: () => void; show: () => void };
}

export function buildAppMenu(ctx: MenuContext): Menu {
  const mac = process.platform === 'darwin';
  const name = app.getName();

  const appMenu: MenuItemConstructorOptions = {
    label: name,
    submenu: [
      { role: 'about' },
      { type: 'separator' },
      { role: 'services' },
      { type: 'separator' },
      { role: 'hide' },
      { role: 'hideOthers' },
      { role: 'unhide' },
      { type: 'separator' },
      { role: 'quit' },
    ],
  };

  const fileMenu: MenuItemConstructorOptions = {
    label: 'File',
    submenu: [
      { label: 'Open Data Folder', click: () => shell.openPath(ctx.dataDir).catch(() => undefined) },
      { label: 'Copy Collector URL', click: () => clipboard.writeText(ctx.collectorUrl) },
      ...(ctx.localApi
        ? ([
            { type: 'separator' },
            { label: 'Local API and MCP for Agents', type: 'checkbox', checked: ctx.localApi.enabled, click: ctx.localApi.toggle },
            { label: 'Show Local API Address and Token…', enabled: ctx.localApi.enabled, click: ctx.localApi.show },
          ] as MenuItemConstructorOptions[])
        : []),
      { type: 'separator' },
      mac ? { role: 'close' } : { role: 'quit' },
    ],
  };

  const editMenu: MenuItemConstructorOptions = {
    label: 'Edit',
    submenu: [
      { role: 'undo' },
      { role: 'redo' },
      { type: 'separator' },
      { role: 'cut' },
      { role: 'copy' },
      { role: 'paste' },
      ...(mac ? [{ role: 'pasteAndMatchStyle' } as const] : []),
      { role: 'delete' },
      { type: 'separator' },
      { role: 'selectAll' },
    ],
  };

  const viewMenu: MenuItemConstructorOptions = {
    label: 'View',
    submenu: [
      ...(ctx.dev
        ? ([{ role: 'reload' }, { role: 'forceReload' }, { role: 'toggleDevTools' }, { type: 'separator' }] as const)
        : []),
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      { type: 'separator' },
      { role: 'togglefullscreen' },
    ],
  };

  const windowMenu: MenuItemConstructorOptions = {
    role: 'window',
    submenu: mac
      ? [{ role: 'minimize' }, { role: 'zoom' }, { type: 'separator' }, { role: 'front' }]
      : [{ role: 'minimize' }, { role: 'close' }],
  };

  const helpMenu: MenuItemConstructorOptions = {
    role: 'help',
    submenu: [
      { label: `Collector: ${ctx.collectorUrl}`, enabled: false },
      { label: 'Copy Collector URL', click: () => clipboard.writeText(ctx.collectorUrl) },
      ...(mac ? [] : [{ type: 'separator' } as const, { role: 'about' } as const]),
    ],
  };

  return Menu.buildFromTemplate([
    ...(mac ? [appMenu] : []),
    fileMenu,
    editMenu,
    viewMenu,
    windowMenu,
    helpMenu,
  ]);
}
