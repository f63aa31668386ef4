import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile, MAX_CONFIG_FILE_BYTES } from '../../src/main/load-config';
import { MAX_INPUT_DEPTH } from '../../src/shared/nesting';
import { startTestEngine } from '../helpers/engine';
import { openDbFile } from '../helpers/db-file';
import { CLI, ensureBuilt, ROOT, startServe, stopServe } from '../helpers/serve';

// Issue 22, item 3: `serve --config` with a file whose write key another source holds exited 1 with
// a stack trace; /dev/zero grew to 3 GB, a FIFO blocked the start, a UTF-8 BOM was refused and
// duplicate keys silently kept the last. The real CLI in a child process, a real SQLite file.

const dirs: string[] = [];
const tempDir = (prefix = 'wl-config-file-') => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

beforeAll(() => ensureBuilt(), 180_000);
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `webhook-lab serve` with these args; it must exit by itself (a refused config) within the timeout. */
function runServe(args: string[], timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const env = { ...process.env };
  delete env.WEBHOOK_LAB_TOKEN;
  const proc = spawn(process.execPath, [CLI, 'serve', '--collector-port', '0', '--ui-port', '0', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`serve did not exit within ${timeoutMs} ms; stdout: ${stdout} stderr: ${stderr}`));
    }, timeoutMs);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

function file(name: string, content: string | Buffer): string {
  const p = join(tempDir(), name);
  writeFileSync(p, content);
  return p;
}

const expectRefused = (r: { code: number | null; stdout: string; stderr: string }, text: string) => {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toContain(text);
  expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  expect(r.stdout).toBe('');
};

describe('serve --config with a file that clashes with the data folder', () => {
  it('a new source followed by one whose write key is taken: exit 2 naming sources[1].writeKey; nothing of the file is applied', async () => {
    const dataDir = tempDir();
    const before = await startTestEngine({ dataDir, config: { sources: [{ name: 'old', writeKey: 'wk_taken' }] } });
    await before.stop({ keepData: true });
    const config = file('clash.json', JSON.stringify({ sources: [{ name: 'first-new', writeKey: 'wk_first' }, { name: 'second-new', writeKey: 'wk_taken' }], settings: { timeScale: 9 } }));
    const r = await runServe(['--data-dir', dataDir, '--config', config]);
    expectRefused(r, 'sources[1].writeKey: already used by source "old"');
    expect(r.stderr).toContain(config);
    expect(r.stderr).toContain('nothing of it was applied');
    const db = openDbFile(dataDir);
    try {
      expect(db.prepare('SELECT name FROM sources ORDER BY name').pluck().all()).toEqual(['old']);
      expect(db.prepare("SELECT value FROM settings WHERE key = 'timeScale'").pluck().get()).not.toBe('9');
    } finally {
      db.close();
    }
  });
});

describe('reading the file', () => {
  it('/dev/zero is refused at once as a device, without reading it', async () => {
    if (!existsSync('/dev/zero')) return void console.log('skipped: no /dev/zero on this system');
    const r = await runServe(['--data-dir', tempDir(), '--config', '/dev/zero']);
    expectRefused(r, 'config file /dev/zero is not a regular file (it is a device)');
  });

  it('a FIFO nobody writes to is refused at once, not waited on', async () => {
    const fifo = join(tempDir(), 'config.fifo');
    const made = spawnSync('mkfifo', [fifo]);
    if (made.status !== 0) return void console.log(`skipped: mkfifo is not available here (${made.error?.message ?? made.stderr})`);
    const r = await runServe(['--data-dir', tempDir(), '--config', fifo]);
    expectRefused(r, `config file ${fifo} is not a regular file (it is a FIFO)`);
  });

  it('a folder is refused as a folder', async () => {
    const dir = tempDir();
    expectRefused(await runServe(['--data-dir', tempDir(), '--config', dir]), `config file ${dir} is not a regular file (it is a folder)`);
  });

  it(`more than ${MAX_CONFIG_FILE_BYTES} bytes (10 MiB) is refused before reading; exactly that much is read`, async () => {
    const big = join(tempDir(), 'big.json');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, MAX_CONFIG_FILE_BYTES + 1); // sparse: no 10 MiB written
    closeSync(fd);
    expectRefused(await runServe(['--data-dir', tempDir(), '--config', big]), `config file ${big} is larger than 10 MiB, the most a config file may be`);
    // At the cap: a valid config padded with spaces to exactly 10 MiB is read and applied.
    const json = JSON.stringify({ sources: [{ name: 'padded', writeKey: 'wk_padded' }] });
    const atCap = file('at-cap.json', json + ' '.repeat(MAX_CONFIG_FILE_BYTES - json.length));
    expect(loadConfigFile(atCap).sources[0]).toMatchObject({ name: 'padded', writeKey: 'wk_padded' });
  });

  it('a UTF-8 byte order mark is accepted: serve starts with the file applied', async () => {
    const json = JSON.stringify({ sources: [{ name: 'bom', writeKey: 'wk_bom' }] }, null, 2);
    const config = file('bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]));
    expect(loadConfigFile(config)).toEqual(loadConfigFile(file('plain.json', json)));
    const s = await startServe(['--data-dir', tempDir(), '--config', config]);
    try {
      const res = await fetch(`${s.api}/sources`, { headers: { authorization: `Bearer ${s.token}` } });
      expect(((await res.json()) as { name: string; writeKey: string }[]).map((x) => [x.name, x.writeKey])).toEqual([['bom', 'wk_bom']]);
    } finally {
      await stopServe(s);
    }
  });

  it('bytes that are not UTF-8 (a UTF-16 file) are refused saying so', async () => {
    const config = file('utf16.json', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"sources":[]}', 'utf16le')]));
    expectRefused(await runServe(['--data-dir', tempDir(), '--config', config]), `config file ${config} is not UTF-8 text`);
  });

  it('a key given twice in one object is refused naming its path and line, at any level', async () => {
    const text = `{
  "sources": [
    { "name": "a", "writeKey": "wk_1",
      "writeKey": "wk_2" }
  ],
  "settings": { "timeScale": 2, "timeScale": 3 },
  "settings": {}
}`;
    const config = file('dups.json', text);
    const r = await runServe(['--data-dir', tempDir(), '--config', config]);
    expectRefused(r, 'sources[0].writeKey: duplicate key (line 4)');
    expect(r.stderr).toContain('settings.timeScale: duplicate key (line 6)');
    expect(r.stderr).toContain('settings: duplicate key (line 7)');
    // The same key in different objects is no duplicate; an escaped spelling of a key is the same key.
    expect(loadConfigFile(file('ok.json', '{"sources":[{"name":"a"},{"name":"b"}]}')).sources.length).toBe(2);
    expect(() => loadConfigFile(file('esc.json', '{"sources":[],"\\u0073ources":[]}'))).toThrow('sources: duplicate key (line 1)');
  });

  it('a key JavaScript would take for a prototype is refused naming it, not lost (as the control API refuses it)', async () => {
    // A review: `"__proto__": {...}` in headers or mapping data was dropped without a word by `serve --config`.
    const text = '{"sources":[{"name":"s","webhooks":{"enabled":true,"urls":[{"url":"http://127.0.0.1:9/h","headers":{"__proto__":{"X-Evil":"1"},"X-Good":"2"}}]}}],\n"settings":{"constructor":{"prototype":{}}}}';
    const r = await runServe(['--data-dir', tempDir(), '--config', file('proto.json', text)]);
    expectRefused(r, 'sources[0].webhooks.urls[0].headers.__proto__: key "__proto__" is not accepted (line 1): JavaScript reads it as an object\'s prototype, so it would be lost');
    expect(r.stderr).toContain('settings.constructor.prototype: key "prototype" is not accepted (line 2)');
  });

  it(`a file nested past ${MAX_INPUT_DEPTH} levels is refused naming the path, not a stack overflow`, async () => {
    const rule = (n: number) => '{"combine":"and","conditions":['.repeat(n) + '{"kind":"trait","trait":"t","op":"exists"}' + ']}'.repeat(n);
    const config = file('deep.json', `{"sources":[{"name":"s"}],"audiences":[{"name":"A","sources":["s"],"rule":${rule(200_000)}}]}`);
    const r = await runServe(['--data-dir', tempDir(), '--config', config]);
    expectRefused(r, `audiences[0].rule.conditions[0].conditions: nested more than ${MAX_INPUT_DEPTH} levels deep`);
    expect(() => loadConfigFile(config)).toThrow(ConfigError);
  });
});

describe('the config version (issue 27)', () => {
  it('a file of a newer version is refused by name at start (exit 2); version 1 and none read as they are', async () => {
    const newer = file('newer.json', JSON.stringify({ version: 3, sources: [{ name: 'from-the-future' }] }));
    const r = await runServe(['--data-dir', tempDir(), '--config', newer]);
    expectRefused(r, 'version: this file was made by a newer Webhook Lab: this one reads config versions 1 to 2');
    for (const version of [1, undefined]) {
      const dataDir = tempDir();
      const older = file(`v${version ?? 'none'}.json`, JSON.stringify({ ...(version ? { version } : {}), sources: [{ name: 'old-file' }] }));
      const t = await startTestEngine({ dataDir, config: loadConfigFile(older) });
      try {
        expect((await t.call('listSources', {})).map((s) => s.name)).toContain('old-file');
        // Export writes the version it is.
        expect((await t.call('getConfig', {})).version).toBe(2);
      } finally {
        await t.stop();
      }
    }
  });

  it('POST /api/config with a newer version is a 400 naming version, and changes nothing', async () => {
    const t = await startTestEngine({ dataDir: tempDir() });
    try {
      await expect(t.call('importConfig', { version: 3, sources: [{ name: 'x' }] } as never)).rejects.toMatchObject({ status: 400, fields: [{ path: 'version' }] });
      expect((await t.call('listSources', {})).map((s) => s.name)).not.toContain('x');
      const exported = await t.call('getConfig', {});
      expect(exported.version).toBe(2);
      // What it exports, it imports.
      expect((await t.call('importConfig', exported)).ok).toBe(true);
    } finally {
      await t.stop();
    }
  });
});
