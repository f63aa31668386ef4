import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, newestMtime, ROOT } from './serve';

// The npm package as a user gets it: `npm pack`, then `npm install --omit=dev` of the tarball into
// an empty folder. Used by tests/integration/npm-package.test.ts and docs-ci.test.ts.
//
// better-sqlite3's install script (prebuild-install, else a compile) is kept, as a user's install
// runs it, but it finds its prebuilt addon in a local folder (npm_config_better_sqlite3_local_prebuilds)
// instead of downloading it from GitHub, which a machine like this cannot reach: the addon this
// checkout's `npm ci` compiled, packed the way better-sqlite3 publishes its prebuilds. That saves a
// second compile (about a minute on two cores); if the versions differ it compiles, slower but the
// same. `--prefer-offline` takes the packages from the npm cache `npm ci` just filled.
//
// The tarball is packed with --ignore-scripts: prepack would rebuild out/ while other test files
// run the CLI from it. `npm test` builds out/ and out/types first; ensureBuilt() and the
// declarations step below cover a run of one test file alone.

export interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string }[];
}

/** The environment without what an outer `npm test` passes down (npm_config_*, npm_package_*), so npm below behaves as a user's. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (/^npm_(config|package|lifecycle)_/i.test(key) || key === 'INIT_CWD') delete env[key];
  return env;
}

export function run(cmd: string, args: string[], cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(cmd, args, { cwd, env: { ...cleanEnv(), ...env }, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal ?? r.error?.message}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Builds if needed and packs the checkout into `work`; returns what `npm pack --json` reported. */
export function pack(work: string): Packed {
  ensureBuilt();
  // Only when stale: two test files packing at once must not rewrite the files the other is packing.
  const types = join(ROOT, 'out/types/main/engine/client/index.d.ts');
  if (!existsSync(types) || statSync(types).mtimeMs < newestMtime(join(ROOT, 'src'))) {
    run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.types.json'], ROOT, 120_000);
  }
  const json = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT, 120_000);
  return JSON.parse(json.slice(json.indexOf('[')))[0] as Packed;
}

/**
 * The environment under which `npm install` of the tarball finds better-sqlite3's addon locally
 * (see above); it writes the prebuild archive into `work`/prebuilds.
 */
export function localPrebuildEnv(work: string): NodeJS.ProcessEnv {
  const prebuilds = join(work, 'prebuilds');
  mkdirSync(prebuilds, { recursive: true });
  const sqlite = join(ROOT, 'node_modules', 'better-sqlite3');
  const version = (JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')) as { version: string }).version;
  const archive = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  run('tar', ['-czf', join(prebuilds, archive), '-C', sqlite, 'build/Release/better_sqlite3.node'], ROOT, 60_000);
  return { npm_config_better_sqlite3_local_prebuilds: prebuilds, npm_config_prefer_offline: 'true' };
}

/** An empty project folder `dir` with the tarball installed as a user would (`npm install --omit=dev`). */
export function installTarball(work: string, tarball: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', tarball], dir, 400_000, localPrebuildEnv(work));
}
