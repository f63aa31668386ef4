import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Engine } from '../engine/engine.types';
import { startControlServer } from '../server/control-server';
import { keptToken } from '../ui-token';
import { DEFAULT_UI_PORT } from '../../shared/ports';

// The desktop app's opt-in local API (issue 39): the window talks to its engine over IPC and opens no
// port, so local tools (a coding agent's MCP client at /mcp, `webhook-lab check`, connectLab) have
// nothing to reach. Turned on (File menu), the control API and /mcp start on loopback, behind the
// token the data folder keeps (ui-token, as serve's) and the same Host/Origin checks as web mode.
// Off by default; the choice is kept in the data folder (FLAG_FILE) and holds across restarts.
// No electron import: the menu and the dialog that show the address and token are index.ts's.

export const FLAG_FILE = 'desktop-local-api';
/** serve's default UI port, when free; else any free port (the dialog shows which). */
const PREFERRED_PORT = DEFAULT_UI_PORT;

export interface LocalApiState {
  enabled: boolean;
  /** http://127.0.0.1:PORT while on; null while off. */
  url: string | null;
  token: string | null;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

export class LocalApi {
  private server: Awaited<ReturnType<typeof startControlServer>> | null = null;
  private token: string | null = null;

  constructor(private readonly o: { engine: Engine; dataDir: string; staticDir?: string; log?: (line: string) => void }) {}

  /** Whether it was left on (started again at the app's start). */
  get chosen(): boolean {
    return existsSync(join(this.o.dataDir, FLAG_FILE));
  }

  state(): LocalApiState {
    return { enabled: this.server !== null, url: this.server?.url ?? null, token: this.server ? this.token : null };
  }

  /** Turns it on or off, and keeps the choice. */
  async set(on: boolean): Promise<LocalApiState> {
    const flag = join(this.o.dataDir, FLAG_FILE);
    if (on) {
      writeFileSync(flag, 'on\n', { mode: 0o600 });
      await this.start();
    } else {
      rmSync(flag, { force: true });
      await this.stop();
    }
    return this.state();
  }

  async start(): Promise<LocalApiState> {
    if (this.server) return this.state();
    this.token = keptToken(this.o.dataDir);
    const port = (await portFree(PREFERRED_PORT)) ? PREFERRED_PORT : 0;
    this.server = await startControlServer({ engine: this.o.engine, host: '127.0.0.1', port, token: this.token, staticDir: this.o.staticDir, log: this.o.log });
    this.o.log?.(`local api: ${this.server.url}/api, MCP at ${this.server.url}/mcp (Bearer token: the data folder's ui-token)`);
    return this.state();
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    await s?.app.close();
  }
}
