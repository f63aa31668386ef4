import { homedir } from 'node:os';
import { join } from 'node:path';

/** Same folder the desktop app uses (Electron's userData for this package), so both see one database. */
export function defaultDataDir(): string {
  const home = homedir();
  if (process.platform === 'win32') return join(process.env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'webhook-lab');
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', 'webhook-lab');
  return join(process.env.XDG_CONFIG_HOME ?? join(home, '.config'), 'webhook-lab');
}
