#!/usr/bin/env node
'use strict';
// The `webhook-lab` command. The CLI itself is built from src/main/cli.ts into out/main/cli.js;
// in a fresh checkout that file does not exist yet, so build once (when the build tool is
// installed) or say exactly what to run.

const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

const root = join(__dirname, '..');
const cli = join(root, 'out', 'main', 'cli.js');

if (!existsSync(cli)) {
  let builder;
  try {
    // The package's `exports` hide bin/, so go through its package.json.
    const pkgFile = require.resolve('electron-vite/package.json', { paths: [root] });
    const bin = require(pkgFile).bin;
    builder = join(pkgFile, '..', typeof bin === 'string' ? bin : bin['electron-vite']);
  } catch {
    builder = undefined;
  }
  if (!builder) {
    process.stderr.write('webhook-lab: out/main/cli.js is missing; run `npm run build` in ' + root + ' first.\n');
    process.exit(1);
  }
  process.stderr.write('webhook-lab: first run, building the app (npm run build)…\n');
  // Build output goes to stderr: stdout carries only the `collector:` / `ui:` lines scripts parse.
  const r = spawnSync(process.execPath, [builder, 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0 || !existsSync(cli)) {
    process.stderr.write('webhook-lab: the build failed (see above); fix it and run `npm run build`.\n');
    process.exit(1);
  }
}

require(cli);
