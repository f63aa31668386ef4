#!/usr/bin/env node
// The Model Context Protocol's own conformance suite (@modelcontextprotocol/conformance, pinned in
// package.json) against the lab's Streamable HTTP endpoint /mcp (issue 39):
//
//   npm run build && node scripts/mcp-conformance/run.mjs [--scenario NAME]
//
// It starts `webhook-lab serve` (the built CLI) on a temporary folder and free ports, and puts a small
// proxy in front of /mcp: the suite's client sends no Authorization header, so the proxy adds the
// lab's token. It passes Host and Origin through, only the proxy's port turned into the lab's, so the
// lab judges the names the suite sends (dns-rebinding-protection sends evil.example.com). Scenarios
// that need the suite's reference tools, prompts or resources fail against any other server: they are
// listed with their reasons in expected-failures.yml, and one of them passing fails the run too (the
// suite's rule), so the file stays true. Exit status: the suite's (0 when every failure is expected).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const cli = join(root, 'out/main/cli.js');
const suite = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const expected = join(here, 'expected-failures.yml');

if (!existsSync(cli)) {
  process.stderr.write('mcp-conformance: out/main/cli.js is missing: run `npm run build` first\n');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'webhook-lab-mcp-conformance-'));
const token = randomBytes(18).toString('base64url');
const env = { ...process.env };
delete env.WEBHOOK_LAB_TOKEN;
const lab = spawn(process.execPath, [cli, 'serve', '--data-dir', join(work, 'data'), '--collector-port', '0', '--ui-port', '0', '--token', token], { env, stdio: ['ignore', 'pipe', 'inherit'] });

const labPort = await new Promise((resolvePort, reject) => {
  let out = '';
  const timer = setTimeout(() => reject(new Error('webhook-lab serve did not start within 60 s')), 60_000);
  lab.stdout.on('data', (d) => {
    out += String(d);
    const m = /^ui: http:\/\/127\.0\.0\.1:(\d+)/m.exec(out);
    if (m && /^data: /m.test(out)) {
      clearTimeout(timer);
      resolvePort(Number(m[1]));
    }
  });
  lab.once('exit', (code) => reject(new Error(`webhook-lab serve exited with ${code}`)));
});

let proxyPort = 0;
/** `name:port` with the proxy's port made the lab's: the name is left for the lab to judge. */
const toLab = (hostPort) => hostPort.replace(new RegExp(`:${proxyPort}$`), `:${labPort}`);
const proxy = createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  if (headers.host) headers.host = toLab(headers.host);
  if (headers.origin) {
    try {
      const u = new URL(headers.origin);
      headers.origin = `${u.protocol}//${toLab(u.host)}`;
    } catch {
      // not a URL: passed on as it is, for the lab to refuse
    }
  }
  const upstream = request({ host: '127.0.0.1', port: labPort, method: req.method, path: req.url, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.once('error', (err) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`proxy: ${err.message}`);
  });
  res.once('close', () => upstream.destroy());
  req.pipe(upstream);
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
proxyPort = proxy.address().port;

const args = ['server', '--url', `http://127.0.0.1:${proxyPort}/mcp`, '--expected-failures', expected, '--output-dir', join(work, 'results'), ...process.argv.slice(2)];
// On Node 20 the suite's bundle needs the fs shim (register.mjs says why).
const major = Number(process.versions.node.split('.')[0]);
const nodeArgs = major < 22 ? ['--import', join(here, 'register.mjs')] : [];
const run = spawn(process.execPath, [...nodeArgs, suite, ...args], { stdio: 'inherit', cwd: work });
const code = await new Promise((r) => run.once('exit', (c, signal) => r(c ?? (signal ? 1 : 0))));

proxy.closeAllConnections();
proxy.close();
const stopped = new Promise((r) => lab.once('exit', r));
lab.kill('SIGTERM');
await stopped;
rmSync(work, { recursive: true, force: true });
process.exit(code);
