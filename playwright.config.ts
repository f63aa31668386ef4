import { availableParallelism } from 'node:os';
import { defineConfig } from '@playwright/test';

// End-to-end tests drive web mode (`webhook-lab serve`) in Chromium. Playwright cannot download its
// own browsers on every machine, so the system Chromium is used (Debian: apt-get install chromium);
// CHROMIUM_PATH points elsewhere. The flags keep Chromium from phoning home and work as root.
export default defineConfig({
  testDir: 'tests/e2e',
  globalSetup: './tests/e2e/global-setup.ts',
  // Each test starts its own `webhook-lab serve` (own data folder, ports 0) and browser context, so
  // files may run side by side: one per core this process may use, at most two (idle: 9.6 → 7.8 min).
  // Pinned to one core (`taskset -c 0`, issue 44's slow machine) that is one, as before.
  workers: Math.min(availableParallelism(), 2),
  fullyParallel: false,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  reporter: process.env.CI ? [['list'], ['html', { open: 'never' }]] : 'list',
  outputDir: 'test-results',
  use: {
    browserName: 'chromium',
    viewport: { width: 1440, height: 900 },
    colorScheme: 'light',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
