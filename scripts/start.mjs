#!/usr/bin/env node
// `npm start`: build, then open the desktop window. Where Electron cannot run (its binary could not
// be downloaded, no display, no better-sqlite3 for its ABI, or it exits during start-up), say so
// in one line and start web mode (`webhook-lab serve`) instead, which prints the URL to open.
// Extra arguments (`npm start -- --data-dir /tmp/lab`) go to whichever face starts.

import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT, ensureElectronNative, installedElectronPath } from './electron-native.mjs';
import { desktopNodeHint } from './desktop-node.mjs';

/** Printed by src/main/index.ts once the window is ready: from then on, no fallback. */
const READY_LINE = 'desktop: window ready';
const require = createRequire(join(ROOT, 'package.json'));
const args = process.argv.slice(2);

function build() {
  const pkgFile = require.resolve('electron-vite/package.json');
  const bin = require(pkgFile).bin;
  const cli = join(pkgFile, '..', typeof bin === 'string' ? bin : bin['electron-vite']);
  const r = spawnSync(process.execPath, [cli, 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('npm start: the build failed (see above).');
    process.exit(r.status ?? 1);
  }
}

function firstLine(text) {
  const lines = String(text).split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.find((l) => /error|failed|cannot|missing/i.test(l)) ?? lines[0] ?? '';
}

/**
 * The Electron executable, or the reason there is none. `require('electron')` downloads the binary
 * on first use (Electron 45 has no install script); it runs in a child so a failed download's stack
 * trace stays out of the terminal and only its reason is shown.
 */
async function findElectron() {
  const installed = installedElectronPath();
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    // No window could open anyway: do not download ~100 MB to find that out.
    return { reason: `no display: DISPLAY and WAYLAND_DISPLAY are unset${installed ? '' : ', and the Electron binary is not installed'}` };
  }
  if (installed) return { path: installed };
  const fetcher = spawn(process.execPath, ['-e', "process.stdout.write(require('electron'))"], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  fetcher.stdout.on('data', (c) => (out += c));
  fetcher.stderr.on('data', (c) => (err = (err + c).slice(-16384)));
  // Only a download that takes a while earns a progress line; a quick failure stays one line.
  const notice = setTimeout(() => console.log('Downloading the Electron binary (first start only)…'), 1500);
  const code = await new Promise((resolve) => {
    fetcher.on('error', (e) => {
      err += e.message;
      resolve(1);
    });
    fetcher.on('exit', (c) => resolve(c ?? 1));
  });
  clearTimeout(notice);
  const path = installedElectronPath();
  if (code === 0 && path) return { path };
  const detail = firstLine(err) || firstLine(out) || `exit code ${code}`;
  return { reason: `the Electron binary could not be downloaded: ${detail}${desktopNodeHint(process.versions.node)}` };
}

// Children run in their own process group (POSIX), so a Ctrl+C reaches them once, through us: the
// terminal signals our group and npm forwards the same signal again, and a second SIGINT tells
// `webhook-lab serve` to skip its clean shutdown. Repeats within a second count as one.
const ownGroup = process.platform !== 'win32';
let child;
let stopping = false;
let lastSignalAt = 0;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    const now = Date.now();
    if (now - lastSignalAt < 1000) return;
    lastSignalAt = now;
    stopping = true;
    if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
    else process.exit(130);
  });
}
process.on('exit', () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});

let fellBack = false;
function startWebMode(reason) {
  if (fellBack) return;
  fellBack = true;
  console.log(`Electron is not available here (${reason}); starting web mode instead.`);
  child = spawn(process.execPath, [join(ROOT, 'bin', 'webhook-lab.js'), 'serve', ...args], { cwd: ROOT, stdio: 'inherit', detached: ownGroup });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

function startDesktop(electronPath) {
  const env = { ...process.env };
  // Set by some terminals (VS Code's); it would make the binary behave as plain Node.
  delete env.ELECTRON_RUN_AS_NODE;
  const extra = [];
  // Chromium refuses to run as root with its sandbox on (containers, CI); the renderer keeps
  // Electron's JS sandbox (sandbox: true) either way.
  if (process.platform === 'linux' && process.getuid?.() === 0) extra.push('--no-sandbox');

  child = spawn(electronPath, [ROOT, ...extra, ...args], { cwd: ROOT, env, stdio: ['inherit', 'pipe', 'pipe'], detached: ownGroup });
  let ready = false;
  let stderrHeld = '';
  let stdoutTail = '';

  child.stdout.on('data', (chunk) => {
    process.stdout.write(chunk);
    if (!ready) {
      stdoutTail = (stdoutTail + chunk).slice(-4096);
      if (stdoutTail.includes(READY_LINE)) {
        ready = true;
        process.stderr.write(stderrHeld);
        stderrHeld = '';
      }
    }
  });
  // Until the window is up, Electron's stderr is held back: if it dies starting, the one-line
  // reason replaces Chromium's noise; once it is up, everything streams through.
  child.stderr.on('data', (chunk) => {
    if (ready) process.stderr.write(chunk);
    else stderrHeld = (stderrHeld + chunk).slice(-64 * 1024);
  });
  child.on('error', (err) => {
    if (!ready && !stopping) startWebMode(`Electron could not be started: ${err.message}`);
    else process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (fellBack) return;
    if (ready || code === 0 || stopping) {
      process.stderr.write(stderrHeld);
      process.exit(code ?? (signal ? 1 : 0));
    }
    // Dying before the window appeared is "cannot start": fall back rather than leave the user with nothing.
    const why = firstLine(stderrHeld) || (signal ? `killed by ${signal}` : `exit code ${code}`);
    startWebMode(`Electron exited during start-up: ${why}`);
  });
}

build();
const electron = await findElectron();
if (!electron.path) {
  startWebMode(electron.reason);
} else {
  let nativeReady = true;
  try {
    ensureElectronNative({ electronPath: electron.path });
  } catch (err) {
    nativeReady = false;
    startWebMode(`better-sqlite3 could not be built for Electron: ${err.message.split('; ')[0]}`);
  }
  if (nativeReady) startDesktop(electron.path);
}
