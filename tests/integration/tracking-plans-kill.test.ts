import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, startServe, stopServe, type Serve } from '../helpers/serve';
import { HEAVY_RULE, heavyItems, lightItems } from '../helpers/heavy-rule';

// A 2xx means the call and its verdict are committed, also when the check ran in a worker (issue
// 38): the process killed (SIGKILL, no cleanup) while pooled checks are under way loses nothing it
// answered 2xx, and each such call comes back with its verdict. The real CLI, its built check worker.

const dataDir = mkdtempSync(join(tmpdir(), 'wl-plan-kill-'));
const config = {
  sources: [{ name: 'app', writeKey: 'wk_kill', trackingPlan: { name: 'plan', violations: 'block' } }],
  trackingPlans: [{ name: 'plan', rules: [HEAVY_RULE] }],
};
const auth = { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('wk_kill:').toString('base64')}` };

let serve: Serve | undefined;
beforeAll(() => ensureBuilt());
afterAll(async () => {
  await stopServe(serve);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('kill -9 during pooled checks', () => {
  it('every call answered 2xx is stored after the restart, with its verdict', async () => {
    const file = join(dataDir, 'config.json');
    writeFileSync(file, JSON.stringify(config));
    const first = await startServe(['--data-dir', join(dataDir, 'data'), '--config', file]);
    const answered: string[] = [];
    let n = 0;
    let sending = true;
    // Four senders at once: heavy calls (checked in the workers, seconds each, stopped at 250 ms) and small ones.
    const sender = async () => {
      while (sending) {
        const k = n++;
        const id = `k-${k}`;
        const heavy = k % 2 === 1;
        const body = JSON.stringify({ userId: 'u', event: 'Heavy', messageId: id, properties: { a: heavy ? heavyItems() : lightItems() } });
        const res = await fetch(`${first.collector}/v1/track`, { method: 'POST', headers: auth, body }).catch(() => undefined);
        if (res?.status === 200) answered.push(id);
      }
    };
    const senders = [sender(), sender(), sender(), sender()];
    // Killed once some heavy calls were answered, with others still being checked.
    await expect.poll(() => answered.filter((id) => Number(id.slice(2)) % 2 === 1).length, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(2);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    sending = false;
    await Promise.all(senders);

    serve = await startServe(['--data-dir', join(dataDir, 'data'), '--config', file]);
    const api = async (path: string) => (await fetch(`${serve!.api}${path}`, { headers: { authorization: `Bearer ${serve!.token}` } })).json();
    for (const id of answered) {
      const page = await api(`/messages?q=${id}&limit=1`);
      expect(page.items.map((c: { messageId: string }) => c.messageId), id).toEqual([id]);
      const detail = await api(`/messages/${page.items[0].id}`);
      expect(detail.violations, id).not.toBeNull();
      expect(detail.planCheck, id).toMatchObject({ planName: 'plan' });
    }
    // Heavy ones ran out of their budget and were blocked; small ones passed.
    const heavy = await api(`/messages/${(await api(`/messages?q=${answered.find((id) => Number(id.slice(2)) % 2 === 1)}&limit=1`)).items[0].id}`);
    expect([heavy.call.status, heavy.violations.map((v: { kind: string }) => v.kind)]).toEqual(['blocked', ['check_timeout']]);
  }, 120_000);
});
