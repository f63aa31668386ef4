import { app, BrowserWindow, clipboard, dialog, ipcMain, Menu, session } from 'electron';
import { keepRunningOnUnhandledRejection } from './process-guard';
import { join, resolve } from 'node:path';
import { startEngine } from './engine/engine';
import { defaultDataDir } from './data-dir';
import type { Engine } from './engine/engine.types';
import { IPC_EVENTS_CHANNEL } from '../shared/bridge';
import { createEventForwarder, type RendererLocation } from './ipc/ipc-core';
import { registerIpcHandlers } from './ipc/ipc-register';
import { installContentSecurityPolicy, restrictPermissions } from './electron/csp';
import { startEngineWithPortFallback } from './electron/engine-start';
import { isNativeModuleMismatch, parseLaunchOptions, resolveSqliteBinding, type LaunchOptions } from './electron/launch-options';
import { buildAppMenu } from './electron/menu';
import { LocalApi } from './electron/local-api';
import { createMainWindow, lockNavigation } from './electron/window';
import { tuneHeap } from './heap-tuning';
import { describeDataProblem } from './engine/store/data-problem';

// Electron entry: the desktop shell around the engine. The engine runs here in the main process;
// the window reaches it only through the validated `api:<op>` IPC channels.

tuneHeap();

const APP_NAME = 'Webhook Lab';
/** scripts/start.mjs waits for this line to know the window opened (and no web-mode fallback is needed). */
const READY_LINE = 'desktop: window ready';

const dev = !app.isPackaged && Boolean(process.env.ELECTRON_RENDERER_URL);
const log = (line: string) => console.log(line);

function fatal(title: string, err: unknown): never {
  const detail = err instanceof Error ? err.message : String(err);
  console.error(`${title}: ${detail}`);
  // showErrorBox works before 'ready' too, so every startup failure is visible, not just logged.
  dialog.showErrorBox(title, detail);
  // Electron routes process.exit through app.exit: quits now, without 'will-quit' handlers.
  return process.exit(1);
}

let options: LaunchOptions;
try {
  options = parseLaunchOptions(process.argv, process.env);
} catch (err) {
  fatal('Invalid command line', err);
}

app.setName(APP_NAME);
// The display name must not move the data: userData stays the platform's app-data folder +
// `webhook-lab`, the folder `webhook-lab serve` uses too (one database for both faces), unless
// --data-dir / WEBHOOK_LAB_DATA_DIR says otherwise. Set before anything reads it.
app.setPath('userData', resolve(options.dataDir ?? defaultDataDir()));
app.enableSandbox();

const renderer: RendererLocation = {
  indexFile: join(__dirname, '../renderer/index.html'),
  devServerUrl: dev ? process.env.ELECTRON_RENDERER_URL : undefined,
};

let engine: Engine | undefined;
let win: BrowserWindow | null = null;
let disposeIpc: (() => void) | undefined;
let localApi: LocalApi | undefined;

function openWindow(): BrowserWindow {
  if (!engine) throw new Error('engine not started');
  // out/renderer/icon.png: rendered from src/renderer/public/icon.svg by scripts/icons.mjs, like the installers' icons.
  const w = createMainWindow({ preloadFile: join(__dirname, '../preload/index.js'), renderer, title: APP_NAME, icon: join(__dirname, '../renderer/icon.png') });
  const forwarder = createEventForwarder((batch) => {
    if (!w.isDestroyed()) w.webContents.send(IPC_EVENTS_CHANNEL, batch);
  });
  const unsubscribe = engine.onEvents((events) => forwarder.push(events));
  w.once('ready-to-show', () => log(READY_LINE));
  w.on('closed', () => {
    unsubscribe();
    forwarder.dispose();
    if (win === w) win = null;
  });
  win = w;
  return w;
}

function showWindow(): void {
  if (!engine) return;
  const w = win ?? openWindow();
  if (w.isMinimized()) w.restore();
  w.show();
  w.focus();
}

async function startApp(): Promise<void> {
  installContentSecurityPolicy(session.defaultSession, dev);
  restrictPermissions(session.defaultSession);

  const dataDir = app.getPath('userData');
  const sqliteNativeBinding = resolveSqliteBinding(app.getAppPath(), process.env, app.isPackaged ? process.resourcesPath : undefined);
  let portNotice: string | undefined;
  try {
    const started = await startEngineWithPortFallback(
      startEngine,
      { dataDir, ownedDataDir: options.dataDir === undefined, collectorPort: options.collectorPort, sqliteNativeBinding, log },
      !options.collectorPortExplicit,
    );
    engine = started.engine;
    portNotice = started.portNotice;
  } catch (err) {
    if (isNativeModuleMismatch(err)) {
      fatal(
        'better-sqlite3 is not built for this Electron',
        `${err instanceof Error ? err.message : String(err)}\n\n` +
          'Run `node scripts/electron-native.mjs` (npm start does it for you) to build it into .electron-native/, ' +
          'or use web mode: `npm run serve`. See docs/desktop.md, "Troubleshooting".',
      );
    }
    // A damaged or read-only database: the same text as `serve` prints (data-problem.ts).
    const problem = describeDataProblem(err, dataDir);
    if (problem) fatal(problem.title, problem.detail);
    fatal('Webhook Lab could not start its engine', err);
  }

  log(`collector: ${engine.collectorUrl}`);
  log(`data: ${dataDir}`);
  const running = engine;
  disposeIpc = registerIpcHandlers(ipcMain, engine.handlers, renderer, log, {
    open: (input) => running.openExport(input),
    async choosePath(filename) {
      const options = { title: 'Save export', defaultPath: join(app.getPath('downloads'), filename) };
      const chosen = win && !win.isDestroyed() ? await dialog.showSaveDialog(win, options) : await dialog.showSaveDialog(options);
      return chosen.canceled || !chosen.filePath ? null : chosen.filePath;
    },
  });
  app.setAboutPanelOptions({ applicationName: APP_NAME, applicationVersion: app.getVersion() });
  // The opt-in local API and /mcp for agents (electron/local-api.ts): off unless chosen, in the File menu.
  const local = new LocalApi({ engine, dataDir, staticDir: join(__dirname, '../renderer'), log });
  localApi = local;
  const showLocalApi = () => {
    const st = local.state();
    if (!st.url || !st.token) return;
    const detail = `MCP (Streamable HTTP): ${st.url}/mcp\nControl API: ${st.url}/api\nHeader: Authorization: Bearer ${st.token}\n\nOnly this machine can connect (loopback), with the token. docs/agents.md shows the agents' settings.`;
    const opts = { type: 'info' as const, title: APP_NAME, message: 'Local API and MCP for agents', detail, buttons: ['Copy MCP URL', 'Copy Token', 'Close'], defaultId: 2, cancelId: 2 };
    (win && !win.isDestroyed() ? dialog.showMessageBox(win, opts) : dialog.showMessageBox(opts))
      .then(({ response }) => (response === 0 ? clipboard.writeText(`${st.url}/mcp`) : response === 1 ? clipboard.writeText(st.token!) : undefined))
      .catch(() => undefined);
  };
  const setMenu = () =>
    Menu.setApplicationMenu(
      buildAppMenu({
        dev,
        dataDir,
        collectorUrl: running.collectorUrl,
        localApi: {
          enabled: local.state().enabled,
          toggle: () => {
            local
              .set(!local.state().enabled)
              .then((st) => {
                setMenu();
                if (st.enabled) showLocalApi();
              })
              .catch((err: unknown) => {
                setMenu();
                dialog.showErrorBox('Local API', `It could not start: ${err instanceof Error ? err.message : String(err)}`);
              });
          },
          show: showLocalApi,
        },
      }),
    );
  if (local.chosen) await local.start().catch((err: unknown) => log(`local api: could not start: ${err instanceof Error ? err.message : String(err)}`));
  setMenu();

  const w = openWindow();
  if (portNotice) {
    const notice = portNotice;
    log(notice);
    // After the window is shown: a sheet on a hidden window would appear detached or not at all.
    w.once('ready-to-show', () => {
      dialog.showMessageBox(w, { type: 'warning', title: APP_NAME, message: 'Collector port in use', detail: notice }).catch(() => undefined);
    });
  }
}

// Stop the engine before the process ends: it persists in-flight deliveries and closes SQLite.
let stopState: 'running' | 'stopping' | 'stopped' = 'running';
function stopEngineThenQuit(event: Electron.Event): void {
  if (!engine || stopState === 'stopped') return;
  event.preventDefault();
  if (stopState === 'stopping') return;
  stopState = 'stopping';
  disposeIpc?.();
  const timeout = new Promise<void>((done) => setTimeout(done, 5000).unref());
  const running = engine;
  // The local API first: its requests under way answer before the engine goes.
  const stopAll = (localApi ? localApi.stop().catch(() => undefined) : Promise.resolve()).then(() => running.stop());
  Promise.race([stopAll, timeout])
    .catch((err: unknown) => console.error(`engine stop failed: ${err instanceof Error ? err.message : String(err)}`))
    .finally(() => {
      stopState = 'stopped';
      app.quit();
    });
}

if (!app.requestSingleInstanceLock()) {
  // Another Webhook Lab owns this data folder (and its collector port): bring that one forward instead.
  console.error('Webhook Lab is already running with this data folder; focusing it.');
  app.exit(0);
} else {
  app.on('second-instance', showWindow);
  app.on('web-contents-created', (_event, contents) => lockNavigation(contents));
  app.on('activate', showWindow);
  // On macOS the app (and its collector) keeps running without a window, as Mac apps do.
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  app.on('will-quit', stopEngineThenQuit);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());
  keepRunningOnUnhandledRejection((line) => console.error(line));

  app
    .whenReady()
    .then(startApp)
    .catch((err: unknown) => fatal('Webhook Lab failed to start', err));
}
