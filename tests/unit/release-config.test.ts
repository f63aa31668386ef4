import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// The desktop installers cannot be built here (electron-builder downloads Electron's zip from
// GitHub, which this machine cannot reach), so this checks what can be checked without it: the
// builder config against electron-builder's own schema, its targets, fuses, icons and the addon it
// ships; the release workflow's jobs and steps; the icon files themselves.

const ROOT = resolve(__dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
interface Target {
  target: string[];
  icon: string;
}
interface BuilderConfig {
  appId: string;
  productName: string;
  directories: Record<string, string>;
  files: string[];
  asar: boolean;
  npmRebuild: boolean;
  extraResources: unknown;
  electronFuses: Record<string, boolean>;
  icon: string;
  linux: Target;
  mac: Target;
  win: Target;
}
interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, string | number>;
}
interface Workflow {
  on: { push: { tags: string[] } };
  jobs: { installers: { strategy: { matrix: { os: string[] } }; 'runs-on': string; steps: Step[] } };
}
const builder = parse(read('electron-builder.yml')) as BuilderConfig;
const workflow = parse(read('.github/workflows/release.yml')) as Workflow;
const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string>; devDependencies: Record<string, string>; main: string };

const png = (file: string) => {
  const b = readFileSync(join(ROOT, file));
  expect(b.subarray(0, 8).toString('hex'), `${file} is a PNG`).toBe('89504e470d0a1a0a');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
};

describe('electron-builder.yml', () => {
  it("passes electron-builder's own schema", async () => {
    const require = createRequire(join(ROOT, 'package.json'));
    const { validateConfiguration } = require('app-builder-lib/out/util/config/config') as { validateConfiguration(c: unknown, log: unknown): Promise<void> };
    const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };
    await expect(validateConfiguration(structuredClone(builder), new DebugLogger(false))).resolves.toBeUndefined();
    // The check is real: an unknown key fails it.
    await expect(validateConfiguration({ ...structuredClone(builder), linx: {} }, new DebugLogger(false))).rejects.toThrow(/unknown property 'linx'/);
  });

  it('names the app and builds AppImage + deb, dmg and nsis', () => {
    expect(builder.appId).toMatch(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/);
    expect(builder.productName).toBe('Webhook Lab');
    expect(builder.linux.target).toEqual(['AppImage', 'deb']);
    expect(builder.mac.target).toEqual(['dmg']);
    expect(builder.win.target).toEqual(['nsis']);
    expect(builder.directories).toEqual({ output: 'dist', buildResources: 'build' });
    // The app electron-builder packs starts where package.json says, from what electron-vite built.
    expect(pkg.main).toBe('out/main/index.js');
    expect(builder.files).toEqual(expect.arrayContaining(['out/main/**', 'out/preload/**', 'out/renderer/**', 'package.json']));
  });

  it("sets Electron's recommended fuses", () => {
    expect(builder.electronFuses).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      enableCookieEncryption: true,
    });
    expect(builder.asar).toBe(true);
  });

  it('ships better-sqlite3 built for Electron beside app.asar, where the app looks, without rebuilding node_modules', () => {
    expect(builder.npmRebuild).toBe(false);
    expect(builder.extraResources).toEqual([{ from: '.electron-native/better_sqlite3.node', to: 'native/better_sqlite3.node' }]);
    expect(read('scripts/electron-native.mjs')).toContain("join(ROOT, '.electron-native')");
    expect(read('src/main/electron/launch-options.ts')).toContain("PACKAGED_NATIVE_DIR = 'native'");
    // `npm run dist` builds the app and that addon before packing.
    expect(pkg.scripts.dist).toBe('npm run build && node scripts/electron-native.mjs && electron-builder --publish never');
    expect(pkg.devDependencies['electron-builder']).toBeDefined();
  });

  it('points every platform at icon files that exist and are what they claim', () => {
    for (const size of [16, 24, 32, 48, 64, 128, 256, 512, 1024]) expect(png(`${builder.linux.icon}/${size}x${size}.png`)).toEqual({ width: size, height: size });
    expect(png(builder.icon)).toEqual({ width: 1024, height: 1024 });

    const icns = readFileSync(join(ROOT, builder.mac.icon));
    expect(icns.subarray(0, 4).toString('latin1')).toBe('icns');
    expect(icns.readUInt32BE(4)).toBe(icns.length);
    const types: string[] = [];
    for (let at = 8; at < icns.length; at += icns.readUInt32BE(at + 4)) types.push(icns.subarray(at, at + 4).toString('latin1'));
    expect(types).toEqual(expect.arrayContaining(['icp4', 'ic07', 'ic08', 'ic09', 'ic10']));

    const ico = readFileSync(join(ROOT, builder.win.icon));
    expect([ico.readUInt16LE(0), ico.readUInt16LE(2)]).toEqual([0, 1]);
    const sizes = Array.from({ length: ico.readUInt16LE(4) }, (_, i) => ico[6 + i * 16] || 256);
    expect(sizes).toEqual([16, 24, 32, 48, 64, 128, 256]);

    // The window icon (src/main/index.ts) is the same drawing, copied into out/renderer by the build.
    expect(png('src/renderer/public/icon.png')).toEqual({ width: 512, height: 512 });
    expect(read('src/main/index.ts')).toContain("icon: join(__dirname, '../renderer/icon.png')");
  });
});

describe('.github/workflows/release.yml', () => {
  const job = workflow.jobs.installers;
  const steps = job.steps;
  const step = (name: string) => {
    const s = steps.find((x) => x.name === name);
    expect(s, `step "${name}"`).toBeDefined();
    return s!;
  };

  it('runs on tags, by hand and on packaging changes, on ubuntu, macos and windows', () => {
    expect(workflow.on.push.tags).toEqual(['v*']);
    expect(workflow.on).toHaveProperty('workflow_dispatch');
    expect(job.strategy.matrix.os).toEqual(['ubuntu-latest', 'macos-latest', 'windows-latest']);
    expect(job['runs-on']).toBe('${{ matrix.os }}');
  });

  it('installs with npm ci, tests (all on Linux, build + unit elsewhere), then builds the installers', () => {
    const order = steps.map((s) => s.uses ?? s.run ?? s.name);
    const at = (what: string) => order.findIndex((o) => o?.startsWith(what));
    expect(at('actions/checkout@')).toBe(0);
    expect(steps.find((s) => s.uses?.startsWith('actions/setup-node@'))?.with?.['node-version']).toBe(20);
    expect(at('npm ci')).toBeGreaterThan(0);
    expect(step('npm test')).toMatchObject({ if: "runner.os == 'Linux'", run: 'npm test' });
    expect(step('Build and unit tests')).toMatchObject({ if: "runner.os != 'Linux'" });
    expect(step('Build and unit tests').run).toMatch(/npm run build\n.*vitest run tests\/unit/);
    expect(step('Installers').run).toBe('npm run dist');
    expect(step('Installers').if).toBeUndefined();
    const installers = steps.indexOf(step('Installers'));
    expect(steps.indexOf(step('npm test'))).toBeLessThan(installers);
    expect(steps.indexOf(step('Electron smoke test'))).toBeLessThan(installers);
  });

  it('runs the Electron smoke test under xvfb-run on Linux, and a skip fails it', () => {
    const smoke = step('Electron smoke test');
    expect(smoke.if).toBe("runner.os == 'Linux'");
    expect(smoke.run).toMatch(/^xvfb-run .*playwright test tests\/e2e\/electron\.spec\.ts/m);
    expect(smoke.run).toMatch(/grep -q "1 passed"/);
    expect(existsSync(join(ROOT, 'tests/e2e/electron.spec.ts'))).toBe(true);
    expect(step('Browsers and display for the tests').run).toMatch(/apt-get install -y xvfb/);
  });

  it('uploads every installer as an artifact', () => {
    const upload = steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!;
    expect(String(upload.with!.path).trim().split('\n')).toEqual(['dist/*.AppImage', 'dist/*.deb', 'dist/*.dmg', 'dist/*.exe']);
    expect(upload.with!['if-no-files-found']).toBe('error');
  });
});
