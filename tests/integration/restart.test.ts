import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { ensureBuilt, startServe } from '../helpers/serve';

// At least once: a process killed (SIGKILL, no cleanup) while a delivery is in flight delivers it after restart.
let receiver: TestReceiver;
let hold = true;
const dataDir = mkdtempSync(join(tmpdir(), 'wl-restart-'));

beforeAll(async () => {
  ensureBuilt();
  // While `hold` is set the receiver never answers: the delivery stays in flight.
  receiver = await startReceiver((_req, res) => {
    if (!hold) res.writeHead(200).end('ok');
  });
});
afterAll(async () => {
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('restart', () => {
  it('a delivery in flight when the process was killed is delivered after restart', async () => {
    const config = join(dataDir, 'config.json');
    writeFileSync(config, JSON.stringify({ sources: [{ name: 'app', writeKey: 'wk_restart', webhooks: { enabled: true, urls: [{ url: `${receiver.url}/hook`, headers: {} }] } }] }));
    const first = await startServe(['--data-dir', dataDir, '--config', config]);
    const res = await fetch(`${first.collector}/v1/track`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('wk_restart:').toString('base64')}` },
      body: JSON.stringify({ userId: 'u', event: 'Survives', messageId: 'restart-1' }),
    });
    expect(res.status).toBe(200);
    await receiver.waitForRequests(1);
    kill(first.child);
    await new Promise((r) => first.child.once('exit', r));

    hold = false;
    const second = await startServe(['--data-dir', dataDir, '--config', config]);
    try {
      const reqs = await receiver.waitForRequests(2, 10_000);
      expect(JSON.parse(reqs[1].body.toString())).toMatchObject({ event: 'Survives', messageId: 'restart-1' });
      // Same bytes and signature as before the crash: the body was serialized once and stored.
      expect(reqs[1].body.equals(reqs[0].body)).toBe(true);
      const list = await (await fetch(`${second.api}/messages`, { headers: { authorization: `Bearer ${second.token}` } })).json();
      expect(list.total).toBe(1);
      await expect.poll(async () => {
        const l = await (await fetch(`${second.api}/messages`, { headers: { authorization: `Bearer ${second.token}` } })).json();
        return l.items[0].deliveryState;
      }).toBe('delivered');
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.once('exit', r));
    }
  }, 30_000);
});

function kill(child: ChildProcess) {
  child.kill('SIGKILL');
}
