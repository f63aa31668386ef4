import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpSender } from '../../src/main/engine/dispatcher/http-sender';
import { RunQueue } from '../../src/main/engine/dispatcher/run-queue';
import { DEFAULT_SETTINGS } from '../../src/main/engine/store/settings.repo';
import type { ActiveDelivery } from '../../src/main/engine/store/delivery.types';
import type { Source } from '../../src/shared/types';
import { engineSources } from '../helpers/engine-sources';

// The one way a round goes out (issue 41): every trigger but `scheduled` waits for its lane's slot
// per URL, over a real socket; a receiver check sends with what it was given. Nothing else in the
// engine calls sendRound.

let server: Server;
let base: string;
const seen: { path: string; ua: string | undefined; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', ua: req.headers['user-agent'], body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function delivery(paths: string[]): ActiveDelivery {
  return {
    id: 7, callId: 7, sourceId: 'src', type: 'track', state: 'pending', urls: paths.map((p) => ({ url: `${base}${p}`, headers: {} })), pendingUrls: paths.map((_, i) => i),
    round: 0, attemptCount: 0, simElapsedMs: 0, firstAttemptAt: null, nextAttemptAt: null, body: Buffer.from('{"type":"track"}'), urlStates: paths.map(() => ['pending', null, 0] as const) as never,
    frozen: { userAgent: 'Frozen/1', signature: null }, kind: 'classic', method: 'POST', timeoutMs: 2000, standardWebhooks: null, mapping: null, itemCount: 1,
  };
}

/** A run queue whose lanes are a gate the test opens: each slot asked for waits until `open()`. */
function gated() {
  const asked: string[] = [];
  const waiting: (() => void)[] = [];
  const released: string[] = [];
  const sender = new HttpSender();
  const source = { id: 'src', name: 's', webhooks: { urls: [], sharedSecret: undefined } } as unknown as Source;
  const runs = new RunQueue({
    sender,
    store: { settings: { get: () => DEFAULT_SETTINGS }, sources: { get: (id) => (id === 'src' ? source : undefined) }, signingSecrets: () => [] },
    now: Date.now,
    slot: (url) => {
      asked.push(url);
      // As the lane's: a second release is a no-op (the round gives a slot back as its URL answers, and again at its end).
      let given = false;
      return new Promise((resolve) => waiting.push(() => resolve(() => void (given || ((given = true), released.push(url))))));
    },
  });
  return { runs, asked, released, sender, open: () => waiting.splice(0).forEach((f) => f()) };
}

const until = async (ok: () => boolean) => {
  while (!ok()) await new Promise((r) => setTimeout(r, 5));
};

describe('the run queue', () => {
  it('sends a scheduled round at once: its slots were taken when the scheduler admitted it', async () => {
    const q = gated();
    seen.length = 0;
    const r = await q.runs.run({ delivery: delivery(['/s1', '/s2']), urls: [0, 1], trigger: 'scheduled' });
    expect(q.asked).toEqual([]);
    expect(r.attempts.map((a) => [a.trigger, a.responseStatus, a.round])).toEqual([['scheduled', 200, 1], ['scheduled', 200, 1]]);
    expect(seen.map((s) => s.ua)).toEqual(['Frozen/1', 'Frozen/1']);
    await q.sender.close();
  });

  it.each(['manual', 'replay', 'probe'] as const)('holds a %s round until each URL has its slot, then gives each back', async (trigger) => {
    const q = gated();
    seen.length = 0;
    let done = false;
    const out = q.runs.run({ delivery: delivery(['/m1', '/m2']), urls: [0, 1], trigger }).finally(() => (done = true));
    await until(() => q.asked.length === 2);
    // Nothing is on the wire while the lane has no slot for it.
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([]);
    expect(done).toBe(false);
    q.open();
    const r = await out;
    expect(r.attempts.map((a) => [a.trigger, a.responseStatus])).toEqual([[trigger, 200], [trigger, 200]]);
    expect(seen.map((s) => s.path).sort()).toEqual(['/m1', '/m2']);
    expect(q.released.sort()).toEqual([`${base}/m1`, `${base}/m2`]);
    expect(r.waitedMs).toHaveLength(2);
    await q.sender.close();
  });

  it("sends a receiver check's round with the body, sender and settings it was given", async () => {
    const q = gated();
    seen.length = 0;
    const own = new HttpSender();
    const source = { id: 'probe', name: 'probe', webhooks: { urls: [] } } as unknown as Source;
    const out = q.runs.run({
      delivery: delivery(['/p']), urls: [0], trigger: 'probe', body: Buffer.from('{"tampered":true}'),
      via: { sender: own, source, settings: { ...DEFAULT_SETTINGS, userAgentProduct: 'Other' }, secrets: () => [] },
    });
    await until(() => q.asked.length === 1);
    q.open();
    const r = await out;
    expect(seen).toEqual([{ path: '/p', ua: 'Frozen/1', body: '{"tampered":true}' }]);
    expect(r.attempts[0]!.body?.toString()).toBe('{"tampered":true}');
    await Promise.all([own.close(), q.sender.close()]);
  });
});

describe('sendRound is called from the run queue only', () => {
  it('finds no other caller in the engine', () => {
    const found = engineSources()
      .filter(({ file }) => file !== join('dispatcher', 'run-queue.ts') && file !== join('dispatcher', 'round.ts'))
      .filter(({ text }) => /\bsendRound\b/.test(text.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '')))
      .map(({ file }) => file);
    expect(found).toEqual([]);
  });
});
