// Issue 38: the background chores the other sections do not reach, each on a lab holding enough to
// make it work: a bulk retry of 20,000 failed calls, an audience over 20,000 users synced, a mock
// receiver's log trimmed past its bound, and a clear of every call. Their slices are read from health
// (slices.mjs); the figures here say how much each did.
import { startEngineIn } from './engine.mjs';
import { basicAuth } from './bodies.mjs';

const CALLS = 20_000;
const BATCH = 100;

export async function measureChores({ root, tmp, log, nodeFlags = [] }) {
  log(`\n15. background chores (issue 38): ${CALLS.toLocaleString('en-US')} calls to a receiver that refuses them (400), retried in bulk; an audience over their ${CALLS.toLocaleString('en-US')} users, synced; the receiver's log trimmed; every call cleared`);
  const engine = await startEngineIn(tmp, 'chores', {
    root,
    nodeFlags,
    config: {
      mockReceivers: [{ name: 'refuses', path: '/refuses', behavior: { status: 400 } }],
      sources: [{ name: 'chores', writeKey: 'wk_chores', webhooks: { enabled: true, urls: [{ mockReceiver: 'refuses' }] } }],
      settings: { retentionCalls: 100_000_000 },
    },
  });
  const auth = { authorization: `Bearer ${engine.token}`, 'content-type': 'application/json' };
  const call = async (method, path, body) => {
    const res = await fetch(`${engine.ui}/api${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /api${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  try {
    const sourceId = (await engine.sources()).chores.id;
    for (let i = 0; i < CALLS; i += BATCH) {
      const batch = Array.from({ length: BATCH }, (_, k) => ({ type: 'identify', userId: `user-${i + k}`, traits: { plan: (i + k) % 3 === 0 ? 'pro' : 'free', n: i + k }, messageId: `chore-${i + k}` }));
      const res = await fetch(`${engine.collector}/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: basicAuth('wk_chores') }, body: JSON.stringify({ batch }) });
      if (res.status !== 200) throw new Error(`batch: ${res.status}`);
    }
    const failed = async () => engine.count(sourceId, 'failed');
    for (const until = Date.now() + 300_000; (await failed()) < CALLS && Date.now() < until; ) await new Promise((r) => setTimeout(r, 500));
    const t = performance.now();
    const retried = await call('POST', '/messages/retry', { dryRun: false });
    log(`  bulk retry: ${retried.matched} matched, ${retried.retried} retried in ${((performance.now() - t) / 1000).toFixed(2)} s`);
    const audience = await call('POST', '/audiences', { name: 'Pro', rule: { combine: 'and', conditions: [{ kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' }] }, sourceIds: [sourceId] });
    log(`  audience over ${CALLS.toLocaleString('en-US')} users: ${audience.sync.entered} entered at its first sync`);
    const receivers = await call('GET', '/receivers');
    log(`  the receiver's log: ${receivers[0]?.requestCount ?? 0} requests kept`);
    const cleared = await call('DELETE', '/messages');
    log(`  clear: ${cleared.removed} calls removed, ${cleared.canceled} deliveries canceled`);
  } finally {
    await engine.stop().catch(() => engine.kill());
  }
}
