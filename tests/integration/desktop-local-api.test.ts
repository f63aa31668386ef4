import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAG_FILE, LocalApi } from '../../src/main/electron/local-api';
import { testLab } from '../helpers/test-lab';
import { httpMcpClient, structured } from '../helpers/mcp';

// The desktop app's opt-in local API (issue 39): the controller the File menu drives, over a real
// engine (the menu and its dialog need the Electron binary; this is everything behind them). Off by
// default; on, the control API and /mcp answer on loopback behind the data folder's token; the
// choice holds across restarts; off again, the port closes.

const lab = testLab();

describe('the desktop app\'s local API and MCP for agents', () => {
  it('is off by default; on, /mcp answers with the kept token and refuses without it; the choice is kept; off closes it', async () => {
    const dataDir = lab.dataDir();
    const t = await lab.start({ dataDir });
    const local = new LocalApi({ engine: t.engine, dataDir });
    expect(local.chosen).toBe(false);
    expect(local.state()).toEqual({ enabled: false, url: null, token: null });

    const on = await local.set(true);
    try {
      expect(on.enabled).toBe(true);
      expect(on.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // The token serve keeps in the same folder: one token for both faces.
      expect(on.token).toBe(readFileSync(join(dataDir, 'ui-token'), 'utf8').trim());
      expect(existsSync(join(dataDir, FLAG_FILE))).toBe(true);
      expect(new LocalApi({ engine: t.engine, dataDir }).chosen).toBe(true);

      const unauthorized = await fetch(`${on.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
      expect(unauthorized.status).toBe(401);
      const client = await httpMcpClient(on.url!, on.token!);
      try {
        const labInfo = await structured<{ collectorUrl: string }>(client, 'get_lab');
        expect(labInfo.collectorUrl).toBe(t.collectorUrl);
      } finally {
        await client.close();
      }
    } finally {
      const off = await local.set(false);
      expect(off).toEqual({ enabled: false, url: null, token: null });
    }
    expect(existsSync(join(dataDir, FLAG_FILE))).toBe(false);
    await expect(fetch(`${on.url}/api/health`)).rejects.toThrow();
  }, 60_000);
});
