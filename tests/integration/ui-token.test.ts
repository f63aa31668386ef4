import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, startServe, stopServe, type Serve } from '../helpers/serve';

// Issue 26: the web mode's token is kept in the data folder (owner-only), so a tab left open
// reconnects after a restart; a token given with --token is used as given and not written.
let serve: Serve | undefined;
const dirs: string[] = [];
beforeAll(() => ensureBuilt());
afterEach(async () => {
  await stopServe(serve);
  serve = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'wl-token-'));
  dirs.push(d);
  return d;
}

describe('the web mode token', () => {
  it('is the same after a restart on the same data folder, kept there owner-only, and lets the old tab in', async () => {
    const dir = dataDir();
    serve = await startServe(['--data-dir', dir], null);
    const first = serve.token;
    expect(first).toMatch(/^[0-9a-f]{48}$/);
    await stopServe(serve);
    serve = await startServe(['--data-dir', dir], null);
    expect(serve.token).toBe(first);
    expect(readFileSync(join(dir, 'ui-token'), 'utf8').trim()).toBe(first);
    if (process.platform !== 'win32') expect((statSync(join(dir, 'ui-token')).mode & 0o777).toString(8)).toBe('600');
    const res = await fetch(`${serve.api}/health`, { headers: { authorization: `Bearer ${first}` } });
    expect(res.status).toBe(200);
  });

  it('given with --token, is used as given and not written', async () => {
    const dir = dataDir();
    serve = await startServe(['--data-dir', dir], 'given-token-123');
    expect(serve.token).toBe('given-token-123');
    expect(() => statSync(join(dir, 'ui-token'))).toThrow();
  });
});
