import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlServer } from '../../src/main/server/control-server';
import { startTestEngine, type TestEngine } from '../helpers/engine';

// Web mode's static files over a real socket: caching that lets a reload start from the browser's
// cache (hashed bundles kept, the HTML always checked), and the security headers on every file.

let te: TestEngine;
let server: { app: FastifyInstance; url: string };
let dir: string;
const INLINE = "window.early = fetch('/api/messages');";
const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const scriptSrc = (res: Response) => /script-src ([^;]*)/.exec(res.headers.get('content-security-policy') ?? '')?.[1];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'webhook-lab-static-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), `<!doctype html><title>t</title><script>${INLINE}</script><script type="module" src="./assets/index-BVtofkET.js"></script>`);
  writeFileSync(join(dir, 'robots.txt'), 'User-agent: *');
  writeFileSync(join(dir, 'assets', 'index-BVtofkET.js'), 'export {};');
  te = await startTestEngine();
  server = await startControlServer({ engine: te.engine, host: '127.0.0.1', port: 0, token: 'static-test-token', staticDir: dir });
});

afterAll(async () => {
  await server?.app.close();
  await te?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('web mode static files', () => {
  it('lets the browser keep hashed bundles and makes it check the HTML and public files each load', async () => {
    const bundle = await fetch(`${server.url}/assets/index-BVtofkET.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    for (const path of ['/', '/index.html', '/robots.txt']) {
      const res = await fetch(server.url + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control'), path).toBe('no-cache');
    }
  });

  it('sends the CSP and nosniff with every file, and 404s a missing one', async () => {
    for (const path of ['/', '/assets/index-BVtofkET.js']) {
      const res = await fetch(server.url + path);
      expect(res.headers.get('content-security-policy'), path).toContain("default-src 'self'");
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    expect((await fetch(`${server.url}/assets/missing-00000000.js`)).status).toBe(404);
  });

  it('allows the inline script of index.html by its hash, and no other inline script', async () => {
    expect(scriptSrc(await fetch(server.url))).toBe(`'self' ${sha256(INLINE)}`);
    // Rebuilt while serving: the policy follows the new file.
    const rebuilt = "window.early = fetch('/api/messages?limit=100');";
    writeFileSync(join(dir, 'index.html'), `<!doctype html><script>${rebuilt}</script>`);
    utimesSync(join(dir, 'index.html'), new Date(), new Date(Date.now() + 5000));
    expect(scriptSrc(await fetch(server.url))).toBe(`'self' ${sha256(rebuilt)}`);
  });
});
