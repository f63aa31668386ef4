#!/usr/bin/env node
// Builds better-sqlite3 for Electron's ABI into .electron-native/better_sqlite3.node, which the desktop
// app loads through better-sqlite3's `nativeBinding` option. The copy in node_modules stays the
// plain-Node build (tests, CLI, web mode), so neither runtime breaks the other (DESIGN.md).
//
// Work happens in a temporary copy of the package: first better-sqlite3's own prebuilt download
// (prebuild-install for the Electron runtime), else a node-gyp compile against Electron's headers.
// Usage: node scripts/electron-native.mjs [--force] [--verbose] [--nodedir DIR]
//   --nodedir: Electron's headers already extracted on disk (offline machines), instead of downloading them.

import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const NATIVE_DIR = join(ROOT, '.electron-native');
export const NATIVE_FILE = join(NATIVE_DIR, 'better_sqlite3.node');
const STAMP_FILE = join(NATIVE_DIR, 'build-info.json');
const ELECTRON_HEADERS = 'https://electronjs.org/headers';

const require = createRequire(join(ROOT, 'package.json'));
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/** What the built addon must match; a change in any field means a rebuild. */
export function wantedBuild(root = ROOT) {
  const electronDir = join(root, 'node_modules', 'electron');
  const abiFile = join(electronDir, 'abi_version');
  return {
    electron: readJson(join(electronDir, 'package.json')).version,
    abi: existsSync(abiFile) ? readFileSync(abiFile, 'utf8').trim() : null,
    betterSqlite3: readJson(join(root, 'node_modules', 'better-sqlite3', 'package.json')).version,
    platform: process.platform,
    arch: process.arch,
  };
}

export function isUpToDate(want = wantedBuild()) {
  if (!existsSync(NATIVE_FILE) || !existsSync(STAMP_FILE)) return false;
  try {
    const have = readJson(STAMP_FILE);
    return Object.keys(want).every((k) => have[k] === want[k]);
  } catch {
    return false;
  }
}

// npm passes its config to scripts as npm_config_*; a `nodedir`, `target` or `runtime` meant for
// plain Node would silently build the wrong ABI, so the child tools get a cleaned environment.
function toolEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    const k = key.toLowerCase();
    if (/^npm_config_(nodedir|runtime|target|target_arch|arch|platform|disturl|dist_url|build_from_source)$/.test(k)) delete env[key];
    if (k === 'npm_package_resolved' || k === 'npm_package_from') delete env[key];
  }
  delete env.ELECTRON_RUN_AS_NODE;
  return env;
}

/** The line that explains a failure in prebuild-install's or node-gyp's output. */
export function failureReason(output, fallback) {
  const stack = output
    .split('\n')
    .map((l) => l.match(/^gyp ERR! stack (.*)$/)?.[1]?.trim())
    .filter((l) => l && !l.startsWith('at '));
  if (stack.length > 0) return stack.join(' ').slice(0, 300);
  const warns = [...output.matchAll(/^prebuild-install (?:warn|ERR!) install (.*)$/gm)];
  if (warns.length > 0) return warns[warns.length - 1][1].trim();
  const lines = output.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.filter((l) => /error|fail/i.test(l)).pop() ?? lines.pop() ?? fallback;
}

function run(cmd, args, cwd, log) {
  const r = spawnSync(cmd, args, { cwd, env: toolEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  log?.(output);
  if (r.error) return { ok: false, why: r.error.message, output };
  if (r.status !== 0) return { ok: false, why: failureReason(output, `exit code ${r.status}`), output };
  return { ok: true, output };
}

/** node-gyp ships inside npm; find that copy (or a project-local one) without downloading anything. */
export function findNodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    process.env.npm_execpath && join(dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(dirname(process.execPath), 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  try {
    candidates.push(require.resolve('node-gyp/bin/node-gyp.js'));
  } catch {
    // Not a project dependency; npm's copy is the usual one.
  }
  return candidates.find((p) => p && existsSync(p));
}

/**
 * Produces the addon for `runtime`/`target` in a temporary copy of better-sqlite3 and returns the
 * built file's path (inside `work`). Throws with every attempt's reason when nothing worked.
 */
export function buildAddon({ work, runtime, target, distUrl, nodedir, arch = process.arch, verbose = false }) {
  const src = dirname(require.resolve('better-sqlite3/package.json'));
  const pkgDir = join(work, 'better-sqlite3');
  // The package's own files only: its `build/` holds the Node-ABI addon, which must not leak in.
  for (const part of ['package.json', 'binding.gyp', 'src', 'deps', 'lib']) cpSync(join(src, part), join(pkgDir, part), { recursive: true });
  const built = join(pkgDir, 'build', 'Release', 'better_sqlite3.node');
  const log = verbose ? (text) => process.stderr.write(text) : undefined;
  const reasons = [];

  const prebuild = join(dirname(require.resolve('prebuild-install/package.json')), 'bin.js');
  // prebuild-install maps the Electron version to its ABI with node-abi; a too-old node-abi fails here and node-gyp takes over.
  const r1 = run(process.execPath, [prebuild, '--runtime', runtime, '--target', target, '--arch', arch, '--platform', process.platform, '--verbose'], pkgDir, log);
  if (r1.ok && existsSync(built)) return { file: built, method: 'prebuilt download' };
  reasons.push(`prebuilt download: ${r1.why ?? 'no file produced'}`);

  const gyp = findNodeGyp();
  if (!gyp) {
    reasons.push('compile: node-gyp not found (it ships with npm; reinstall npm or `npm install -g node-gyp`)');
  } else {
    const args = [gyp, 'rebuild', '--release', `--runtime=${runtime}`, `--target=${target}`, `--arch=${arch}`];
    // Headers already on disk (an offline machine) win over downloading them.
    if (nodedir) args.push(`--nodedir=${nodedir}`);
    else if (distUrl) args.push(`--dist-url=${distUrl}`);
    const r2 = run(process.execPath, args, pkgDir, log);
    if (r2.ok && existsSync(built)) return { file: built, method: 'compiled with node-gyp' };
    reasons.push(`compile: ${r2.why ?? 'no file produced'}`);
  }
  throw new Error(reasons.join('; '));
}

/** Loads the addon in Electron running as Node, the only runtime that can tell whether the ABI is right. */
export function verifyWithElectron(electronPath, addonFile) {
  const bs3 = dirname(require.resolve('better-sqlite3/package.json'));
  const code = `const D=require(${JSON.stringify(bs3)});const db=new D(':memory:',{nativeBinding:${JSON.stringify(addonFile)}});if(db.prepare('select 1 as x').get().x!==1)process.exit(3);db.close();`;
  const r = spawnSync(electronPath, ['-e', code], { env: { ...toolEnv(), ELECTRON_RUN_AS_NODE: '1' }, encoding: 'utf8', timeout: 60_000 });
  if (r.error) return { ok: false, why: r.error.message };
  if (r.status !== 0) return { ok: false, why: (r.stderr || r.stdout || `exit code ${r.status}`).trim().split('\n')[0] };
  return { ok: true };
}

/**
 * Makes sure .electron-native/better_sqlite3.node matches the installed Electron and better-sqlite3.
 * Returns its path; throws an Error whose message says what failed.
 */
export function ensureElectronNative({ electronPath, force = false, verbose = false, nodedir, log = (l) => console.error(l) } = {}) {
  const want = wantedBuild();
  if (!force && isUpToDate(want)) return NATIVE_FILE;
  log(`Building better-sqlite3 ${want.betterSqlite3} for Electron ${want.electron} (first run after install; this can take a minute)…`);
  const work = mkdtempSync(join(tmpdir(), 'webhook-lab-native-'));
  try {
    const { file, method } = buildAddon({ work, runtime: 'electron', target: want.electron, distUrl: ELECTRON_HEADERS, nodedir, verbose });
    if (electronPath) {
      const check = verifyWithElectron(electronPath, file);
      if (!check.ok) throw new Error(`the built addon does not load in Electron: ${check.why}`);
    }
    mkdirSync(NATIVE_DIR, { recursive: true });
    // Copy then rename, so a crash mid-copy never leaves a half-written addon that looks current.
    copyFileSync(file, `${NATIVE_FILE}.tmp`);
    renameSync(`${NATIVE_FILE}.tmp`, NATIVE_FILE);
    writeFileSync(STAMP_FILE, `${JSON.stringify({ ...want, method, builtAt: new Date().toISOString() }, null, 2)}\n`);
    log(`better-sqlite3 for Electron ready (${method}): ${NATIVE_FILE}`);
    return NATIVE_FILE;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The Electron executable if it is installed, without triggering electron's own download. */
export function installedElectronPath(root = ROOT) {
  const dir = join(root, 'node_modules', 'electron');
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return undefined;
  const exe = process.env.ELECTRON_OVERRIDE_DIST_PATH
    ? join(process.env.ELECTRON_OVERRIDE_DIST_PATH, readFileSync(pathFile, 'utf8'))
    : join(dir, 'dist', readFileSync(pathFile, 'utf8'));
  return existsSync(exe) ? exe : undefined;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const force = process.argv.includes('--force');
  const verbose = process.argv.includes('--verbose');
  const i = process.argv.indexOf('--nodedir');
  const nodedir = i > 0 ? resolve(process.argv[i + 1] ?? '') : undefined;
  try {
    ensureElectronNative({ electronPath: installedElectronPath(), force, verbose, nodedir });
    if (!installedElectronPath()) console.error('(Electron binary not installed here, so the addon was not test-loaded.)');
  } catch (err) {
    console.error(`Could not build better-sqlite3 for Electron: ${err.message}`);
    console.error('See docs/desktop.md, "Troubleshooting". Web mode (`npm run serve`) does not need this build.');
    process.exit(1);
  }
}
