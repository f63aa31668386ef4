import { _electron as electron, expect, test } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import '../../src/shared/bridge';

// Smoke test of the desktop app: runs wherever the Electron binary exists and a display is
// available, and reports itself skipped with the reason everywhere else (e.g. a machine where the
// binary could not be downloaded). The web-mode suites cover the UI itself.

const ROOT = resolve(__dirname, '../..');

function firstLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.find((l) => /error|failed/i.test(l)) ?? lines[0] ?? '';
}

function electronUnavailable(): string | undefined {
  const pathFile = join(ROOT, 'node_modules', 'electron', 'path.txt');
  const installed = existsSync(pathFile) && existsSync(join(ROOT, 'node_modules', 'electron', 'dist', readFileSync(pathFile, 'utf8')));
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    // No window could open: do not download the binary just to find that out.
    return `no display (DISPLAY/WAYLAND_DISPLAY unset; run under xvfb-run to include it)${installed ? '' : ' and the Electron binary is not installed'}`;
  }
  if (installed) return undefined;
  // require('electron') fetches the binary on first use; where that is impossible it throws.
  const r = spawnSync(process.execPath, ['-e', "process.stdout.write(require('electron'))"], { cwd: ROOT, encoding: 'utf8', timeout: 10 * 60_000 });
  if (r.status === 0 && existsSync(r.stdout)) return undefined;
  return `the Electron binary is not available: ${firstLine(`${r.stderr}\n${r.stdout}`) || `exit code ${r.status}`}`;
}

const unavailable = electronUnavailable();

test.describe('desktop app (Electron)', () => {
  test.skip(unavailable !== undefined, unavailable ?? '');
  test.setTimeout(10 * 60_000);

  let dataDir: string;

  test.beforeAll(() => {
    // Building better-sqlite3 for Electron the first time can take minutes (a compile).
    test.setTimeout(10 * 60_000);
    if (!existsSync(join(ROOT, 'out', 'main', 'index.js'))) {
      const b = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: ROOT, encoding: 'utf8' });
      expect(b.status, `electron-vite build failed:\n${b.stderr}`).toBe(0);
    }
    // The app loads better-sqlite3 built for Electron's ABI; a failure here is a real failure.
    const n = spawnSync(process.execPath, [join(ROOT, 'scripts', 'electron-native.mjs')], { cwd: ROOT, encoding: 'utf8' });
    expect(n.status, `scripts/electron-native.mjs failed:\n${n.stderr}`).toBe(0);
    dataDir = mkdtempSync(join(tmpdir(), 'webhook-lab-electron-'));
  });

  test.afterAll(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('opens the window, reaches the engine over IPC and shows the empty inspector', async () => {
    const env = { ...process.env } as Record<string, string>;
    delete env.ELECTRON_RUN_AS_NODE;
    // Port 0: a busy 8787 on the test machine must not turn into a dialog.
    const app = await electron.launch({ args: [ROOT, `--data-dir=${dataDir}`, '--collector-port=0'], cwd: ROOT, env });
    try {
      const win = await app.firstWindow();
      await expect(win).toHaveTitle(/Webhook Lab/);

      // Isolation: the page sees the bridge and nothing of Node or Electron.
      expect(await win.evaluate(() => typeof window.webhookLab?.call)).toBe('function');
      expect(await win.evaluate(() => 'require' in window || 'process' in window || 'ipcRenderer' in window)).toBe(false);

      const health = await win.evaluate(() => window.webhookLab!.call('health', {}));
      expect(realpathSync(health.dataDir)).toBe(realpathSync(dataDir));
      expect(health.collectorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      // Validation happens in main and crosses back as a plain {status, error, fields} object.
      const err = await win.evaluate(() => window.webhookLab!.call('listMessages', { limit: 0 }).catch((e: unknown) => e));
      expect(err).toMatchObject({ status: 400, fields: [{ path: 'limit' }] });

      await win.getByTestId('nav-inspector').click();
      await expect(win.getByTestId('inspector-empty')).toBeVisible();
      await expect(win.getByTestId('inspector-empty')).toContainText('No calls yet');

      // New windows and navigation away from the app are refused (non-http URLs are not even handed to the OS).
      const appUrl = win.url();
      expect(await win.evaluate(() => window.open('file:///etc/hosts') === null)).toBe(true);
      await win.evaluate(() => {
        location.href = 'file:///etc/hosts';
      });
      await win.waitForTimeout(500);
      expect(win.url()).toBe(appUrl);
      expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(1);
    } finally {
      await app.close();
    }
  });
});
