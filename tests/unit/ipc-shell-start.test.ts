import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Engine, EngineOptions } from '../../src/main/engine/engine.types';
import { isAddressInUse, portIsFree, startEngineWithPortFallback } from '../../src/main/electron/engine-start';
import { isNativeModuleMismatch, parseLaunchOptions, resolveSqliteBinding } from '../../src/main/electron/launch-options';

// The desktop shell's Electron-free start-up logic: launch options and the collector-port fallback.

describe('parseLaunchOptions', () => {
  it('defaults to port 8787 and the platform data folder', () => {
    expect(parseLaunchOptions(['electron', '.'], {})).toEqual({ dataDir: undefined, collectorPort: 8787, collectorPortExplicit: false });
  });

  it('reads both flag forms, and env as a fallback', () => {
    expect(parseLaunchOptions(['.', '--data-dir', '/tmp/a', '--collector-port=0'], {})).toEqual({
      dataDir: '/tmp/a',
      collectorPort: 0,
      collectorPortExplicit: true,
    });
    expect(parseLaunchOptions(['.'], { WEBHOOK_LAB_DATA_DIR: '/tmp/b', WEBHOOK_LAB_COLLECTOR_PORT: '9000' })).toMatchObject({
      dataDir: '/tmp/b',
      collectorPort: 9000,
    });
    expect(parseLaunchOptions(['--data-dir=/tmp/c'], { WEBHOOK_LAB_DATA_DIR: '/tmp/b' }).dataDir).toBe('/tmp/c');
  });

  it('refuses a bad port', () => {
    expect(() => parseLaunchOptions(['--collector-port', 'abc'], {})).toThrow(/0 to 65535/);
    expect(() => parseLaunchOptions(['--collector-port=70000'], {})).toThrow(/0 to 65535/);
  });
});

describe('resolveSqliteBinding', () => {
  const root = mkdtempSync(join(tmpdir(), 'wl-native-'));
  afterEach(() => rmSync(join(root, '.electron-native'), { recursive: true, force: true }));

  it('prefers the env override, then .electron-native, else leaves better-sqlite3 to find its own', () => {
    expect(resolveSqliteBinding(root, {})).toBeUndefined();
    mkdirSync(join(root, '.electron-native'));
    writeFileSync(join(root, '.electron-native', 'better_sqlite3.node'), '');
    expect(resolveSqliteBinding(root, {})).toBe(join(root, '.electron-native', 'better_sqlite3.node'));
    expect(resolveSqliteBinding(root, { WEBHOOK_LAB_SQLITE_BINDING: '/x.node' })).toBe('/x.node');
  });

  it('an installed app takes the addon packaged in its resources folder first', () => {
    const resources = mkdtempSync(join(tmpdir(), 'wl-resources-'));
    try {
      expect(resolveSqliteBinding(root, {}, resources)).toBeUndefined();
      mkdirSync(join(resources, 'native'));
      writeFileSync(join(resources, 'native', 'better_sqlite3.node'), '');
      expect(resolveSqliteBinding(root, {}, resources)).toBe(join(resources, 'native', 'better_sqlite3.node'));
      expect(resolveSqliteBinding(root, { WEBHOOK_LAB_SQLITE_BINDING: '/x.node' }, resources)).toBe('/x.node');
    } finally {
      rmSync(resources, { recursive: true, force: true });
    }
  });

  it('recognises an addon built for the other runtime', () => {
    const msg =
      "The module '/a/better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 150.";
    expect(isNativeModuleMismatch(new Error(msg))).toBe(true);
    expect(isNativeModuleMismatch(new Error('SQLITE_CANTOPEN'))).toBe(false);
  });
});

describe('startEngineWithPortFallback', () => {
  let blocker: Server | undefined;
  afterEach(async () => {
    const b = blocker;
    blocker = undefined;
    if (b?.listening) await new Promise<void>((r) => b.close(() => r()));
  });

  // Binds the requested port for real, as the engine's collector would, so EADDRINUSE is genuine.
  function listeningStart(started: Server[]) {
    return (opts: EngineOptions) =>
      new Promise<Engine>((resolve, reject) => {
        const srv = createServer();
        srv.once('error', reject);
        srv.listen(opts.collectorPort, '127.0.0.1', () => {
          started.push(srv);
          const port = (srv.address() as { port: number }).port;
          resolve({ collectorUrl: `http://127.0.0.1:${port}` } as Engine);
        });
      });
  }

  async function busyPort(): Promise<number> {
    blocker = createServer();
    await new Promise<void>((r) => blocker!.listen(0, '127.0.0.1', () => r()));
    return (blocker.address() as { port: number }).port;
  }

  it('uses the wanted port when it is free', async () => {
    const started: Server[] = [];
    const port = await busyPort();
    await new Promise<void>((r) => blocker!.close(() => r()));
    blocker = undefined;
    expect(await portIsFree(port)).toBe(true);
    const r = await startEngineWithPortFallback(listeningStart(started), { dataDir: '/unused', collectorPort: port }, true);
    expect(r.engine.collectorUrl).toBe(`http://127.0.0.1:${port}`);
    expect(r.portNotice).toBeUndefined();
    started.forEach((s) => s.close());
  });

  it('falls back to a free port and says so when the wanted port is taken', async () => {
    const started: Server[] = [];
    const port = await busyPort();
    expect(await portIsFree(port)).toBe(false);
    const r = await startEngineWithPortFallback(listeningStart(started), { dataDir: '/unused', collectorPort: port }, true);
    expect(r.engine.collectorUrl).not.toBe(`http://127.0.0.1:${port}`);
    expect(r.portNotice).toContain(`Port ${port} is already in use`);
    expect(r.portNotice).toContain(r.engine.collectorUrl);
    started.forEach((s) => s.close());
  });

  it('fails on a busy port that was chosen explicitly', async () => {
    const port = await busyPort();
    const err = await startEngineWithPortFallback(listeningStart([]), { dataDir: '/unused', collectorPort: port }, false).catch((e) => e);
    expect(isAddressInUse(err)).toBe(true);
  });

  it('finds EADDRINUSE in wrapped causes', () => {
    expect(isAddressInUse(new Error('collector failed', { cause: Object.assign(new Error('x'), { code: 'EADDRINUSE' }) }))).toBe(true);
    expect(isAddressInUse(new Error('ENOENT'))).toBe(false);
  });
});
