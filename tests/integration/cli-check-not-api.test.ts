import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { ensureBuilt } from '../helpers/serve';
import { runCheck as check, type CheckRun } from '../helpers/run-check';

// `webhook-lab check` pointed at servers that are not a Webhook Lab control API, and bad usage.

beforeAll(() => ensureBuilt(), 120_000);

describe('webhook-lab check against something that is not the control API', () => {
  // Issue 22, item 6: it could not ask, so it must not say "a delivery failed" (exit 1) nor print
  // a stack trace: exit 4 with one line naming what it reached.
  let other: TestReceiver;
  beforeAll(async () => {
    other = await startReceiver((req, res) => {
      if (req.url.startsWith('/html/')) return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html>\n<html><body>\n<h1>Welcome</h1>\n</body></html>\n');
      if (req.url.startsWith('/html404/')) return res.writeHead(404, { 'content-type': 'text/html' }).end('<html>\n<body>Not Found</body>\n</html>\n');
      if (req.url.startsWith('/moved/')) return res.writeHead(302, { location: '/html/login' }).end();
      if (req.url.startsWith('/empty/')) return res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      if (req.url.startsWith('/sources-empty/')) {
        // listSources is fine (a source as the lab answers one), getStats is not.
        const source = { id: 's1', name: 'a', writeKey: 'wk', createdAt: '2026-11-30T00:00:00.000Z', webhooks: { enabled: false, urls: [] }, collectorFaults: null };
        const body = req.url.includes('/sources') ? JSON.stringify([source]) : '{"calls": "many"}';
        return res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      }
      // A stalled body: the status line and headers, the start of the JSON, then nothing.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"calls": 1, ');
    });
  });
  afterAll(async () => {
    other.server.closeAllConnections();
    await other.close();
  });

  const oneLine = (r: CheckRun) => {
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr.startsWith('webhook-lab check: ')).toBe(true);
  };

  it('exits 4 with one line when the server answers HTML', async () => {
    const r = await check(['--api', `${other.url}/html/api`, '--token', 't']);
    expect(r.code).toBe(4);
    oneLine(r);
    expect(r.stderr).toContain(`${other.url}/html/api/stats`);
    expect(r.stderr).toMatch(/answered 200 \(text\/html\), not the control API's JSON/);
  });

  it('names where a redirect led', async () => {
    const r = await check(['--api', `${other.url}/moved/api`, '--token', 't']);
    expect(r.code).toBe(4);
    oneLine(r);
    expect(r.stderr).toContain(`${other.url}/moved/api/stats (redirected to ${other.url}/html/login) answered 200 (text/html)`);
  });

  it('exits 4 with one line when the server answers an HTML error page', async () => {
    const r = await check(['--api', `${other.url}/html404/api`, '--token', 't']);
    expect(r.code).toBe(4);
    oneLine(r);
    expect(r.stderr).toContain(`${other.url}/html404/api/stats`);
    expect(r.stderr).toContain('404');
  });

  it('exits 4 with one line when the server answers JSON of another shape', async () => {
    for (const path of ['empty', 'sources-empty']) {
      const r = await check(['--api', `${other.url}/${path}/api`, '--token', 't', ...(path === 'sources-empty' ? ['--source', 'a'] : [])]);
      expect(r.code).toBe(4);
      oneLine(r);
      expect(r.stderr).toContain(`${other.url}/${path}/api/stats`);
      expect(r.stderr).toMatch(/not the control API's (answer|JSON)/);
    }
  });

  it('exits 4 with one line when the body stalls', async () => {
    const r = await check(['--api', `${other.url}/stall/api`, '--token', 't']);
    expect(r.code).toBe(4);
    oneLine(r);
    expect(r.stderr).toContain(`${other.url}/stall/api/stats`);
    expect(r.stderr).toMatch(/did not arrive within 10 s/);
  }, 40_000);

  it('refuses --timeout "" and --source "" as usage errors (2)', async () => {
    for (const args of [['--timeout', ''], ['--timeout', ' '], ['--source', ''], ['--source', '  ']]) {
      const r = await check(['--api', `${other.url}/html/api`, '--token', 't', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`${args[0]}: `);
    }
  });

  it('never prints the password of a URL with credentials', async () => {
    const down = await check(['--api', 'http://admin:hunter2@127.0.0.1:9/api', '--token', 't']);
    expect(down.code).toBe(2);
    expect(down.stderr).not.toContain('hunter2');
    expect(down.stderr).toContain('http://admin:****@127.0.0.1:9/api');
    const html = await check(['--api', `http://admin:hunter2@${other.url.slice('http://'.length)}/html/api`, '--token', 't']);
    expect(html.stderr).not.toContain('hunter2');
  });
});

