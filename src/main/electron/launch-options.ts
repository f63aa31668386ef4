import { existsSync } from 'node:fs';
import { join } from 'node:path';

// Command-line and environment options of the desktop app. Plain Node (no electron import) so the
// parsing is testable; index.ts feeds it process.argv and process.env.

export { DEFAULT_COLLECTOR_PORT } from '../../shared/ports';
import { DEFAULT_COLLECTOR_PORT } from '../../shared/ports';

export interface LaunchOptions {
  /** `--data-dir DIR` or WEBHOOK_LAB_DATA_DIR; the platform's app-data folder when absent. */
  dataDir?: string;
  /** `--collector-port N` (0 = any free port); 8787 when absent. */
  collectorPort: number;
  /** True only when the port was chosen explicitly: then a busy port is an error, not a silent fallback. */
  collectorPortExplicit: boolean;
}

function flagValue(argv: readonly string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === `--${name}`) return argv[i + 1];
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
  }
  return undefined;
}

export function parseLaunchOptions(argv: readonly string[], env: NodeJS.ProcessEnv): LaunchOptions {
  const dataDir = flagValue(argv, 'data-dir') ?? env.WEBHOOK_LAB_DATA_DIR;
  const portText = flagValue(argv, 'collector-port') ?? env.WEBHOOK_LAB_COLLECTOR_PORT;
  let collectorPort = DEFAULT_COLLECTOR_PORT;
  if (portText !== undefined) {
    const n = Number(portText);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      throw new Error(`--collector-port must be an integer from 0 to 65535, got "${portText}"`);
    }
    collectorPort = n;
  }
  return { dataDir: dataDir || undefined, collectorPort, collectorPortExplicit: portText !== undefined };
}

/** Folder, under the app root, where scripts/electron-native.mjs puts better-sqlite3 built for Electron's ABI. */
export const ELECTRON_NATIVE_DIR = '.electron-native';

/** Folder, under an installed app's resources, where electron-builder.yml puts that addon (extraResources). */
export const PACKAGED_NATIVE_DIR = 'native';

/**
 * The better-sqlite3 addon for this Electron: WEBHOOK_LAB_SQLITE_BINDING, else (an installed app,
 * given its resources folder) the copy packaged beside app.asar, else the copy built into
 * `.electron-native/`, else undefined (better-sqlite3's own lookup, right only if node_modules was
 * rebuilt for Electron in place).
 */
export function resolveSqliteBinding(appRoot: string, env: NodeJS.ProcessEnv, resourcesPath?: string): string | undefined {
  if (env.WEBHOOK_LAB_SQLITE_BINDING) return env.WEBHOOK_LAB_SQLITE_BINDING;
  const packaged = resourcesPath && join(resourcesPath, PACKAGED_NATIVE_DIR, 'better_sqlite3.node');
  if (packaged && existsSync(packaged)) return packaged;
  const built = join(appRoot, ELECTRON_NATIVE_DIR, 'better_sqlite3.node');
  return existsSync(built) ? built : undefined;
}

/** An addon compiled for another runtime fails to load with one of these messages. */
export function isNativeModuleMismatch(err: unknown): boolean {
  const text = String((err as { message?: unknown })?.message ?? err);
  return /NODE_MODULE_VERSION|was compiled against a different Node\.js version|invalid ELF header|not a valid Win32 application|Could not locate the bindings file|better_sqlite3\.node/i.test(
    text,
  );
}
