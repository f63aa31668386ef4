import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

// The server under test is the built app (out/), exactly what `webhook-lab serve` runs. Building
// takes a few seconds and guarantees the renderer and CLI match the sources being tested.
export default function globalSetup(): void {
  const browser = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (!existsSync(browser)) {
    throw new Error(`No Chromium at ${browser}. Install it (Debian/Ubuntu: sudo apt-get install -y chromium) or set CHROMIUM_PATH.`);
  }
  if (process.env.E2E_SKIP_BUILD) return;
  const root = resolve(__dirname, '../..');
  const r = spawnSync(process.execPath, [resolve(root, 'node_modules/electron-vite/bin/electron-vite.js'), 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`electron-vite build failed (exit ${r.status})`);
}
