// The engine under test: `node out/main/cli.js serve` as a child process with a temp data dir.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exited, spawnNode } from './proc.mjs';
import { noteSlices } from './slices.mjs';

const TOKEN = 'bench-token';

/** An engine on a fresh data folder `<tmp>/<name>-data`. */
export function startEngineIn(tmp, name, options) {
  const dataDir = join(tmp, `${name}-data`);
  mkdirSync(dataDir);
  return startEngine({ ...options, dataDir });
}

export async function startEngine({ root, dataDir, config, nodeFlags = [], env }) {
  const configFile = join(dataDir, '..', 'bench-config.json');
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const { child, lines, stderr } = await spawnNode(
    [join(root, 'out/main/cli.js'), 'serve', '--data-dir', dataDir, '--collector-port', '0', '--ui-port', '0', '--token', TOKEN, '--config', configFile],
    { wait: ['collector: ', 'ui: '], nodeFlags, env },
  );
  const collector = lines['collector: '];
  const ui = new URL(lines['ui: ']).origin;

  async function api(path) {
    const res = await fetch(`${ui}/api${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    if (!res.ok) throw new Error(`GET /api${path}: ${res.status} ${await res.text()}`);
    return res.json();
  }

  // The background jobs' slices (slices.mjs): health covers 30-60 s, so it is read every 10 s.
  const readSlices = async () => noteSlices((await api('/health').catch(() => undefined))?.eventLoop?.slices);
  const sliceTimer = setInterval(readSlices, 10_000);
  sliceTimer.unref();

  return {
    pid: child.pid,
    collector,
    ui,
    token: TOKEN,
    api,
    stderr,
    sources: async () => Object.fromEntries((await api('/sources')).map((s) => [s.name, s])),
    /** Calls stored for a source (accepted and dropped); `status` narrows it, e.g. 'dropped' or 'delivered'. */
    async count(sourceId, status) {
      const q = new URLSearchParams({ sourceId, limit: '1', ...(status ? { status } : {}) });
      return (await api(`/messages?${q}`)).total;
    },
    health: () => api('/health'),
    /** SIGTERM: the engine finishes requests in progress, checkpoints the WAL and exits. */
    async stop() {
      clearInterval(sliceTimer);
      await readSlices();
      child.kill('SIGTERM');
      const code = await exited(child, 30_000);
      if (code !== 0) throw new Error(`engine exited with ${code ?? `signal ${child.signalCode}`}\n${stderr()}`);
    },
    /** SIGKILL: no checkpoint, no cleanup; resolves once the process is gone. */
    kill: () => (clearInterval(sliceTimer), child.kill('SIGKILL'), exited(child, 15_000)),
  };
}
