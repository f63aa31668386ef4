import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import type { Attempt } from '../../src/shared/types';
import type { HarEntry } from '../../src/main/engine/simulation/export-har';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { closedPort } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';
import { selfSignedCert } from '../helpers/tls';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from '../../src/main/engine/store/store';
import { MIGRATIONS } from '../../src/main/engine/store/migrations';
import { registerSearchFunctions } from '../../src/main/engine/store/database';

// Issue 27: facts on the attempt, over real sockets. How an attempt failed is recorded as fields
// (timeoutMs, tlsError with its kind, connectError), shown in the call detail and the attempt event,
// and exported (JSON Lines as the detail, HAR under _webhookLab), not only as message text.
const KEY = 'wk_facts';
const lab = testLab();
// One attempt each: the next round would be a minute later.
const ONCE = { retrySchedule: { preset: 'custom', delaysMs: [60_000], jitter: 0, windowMs: 120_000, timeoutMs: 300 } };

async function attemptsOf(urls: string[]): Promise<{ t: TestEngine; attempts: Attempt[] }> {
  const t = await lab.start({ config: { sources: [webhookSource('facts', KEY, urls)], settings: ONCE } });
  expect((await t.post('/v1/track', { userId: 'u', event: 'facts' }, { writeKey: KEY })).status).toBe(200);
  const d = await waitFor(async () => {
    const c = (await t.call('listMessages', { limit: 1 })).items[0];
    if (!c) return undefined;
    const m = await t.call('getMessage', { id: c.id });
    return m.deliveries[0]?.attempts.length === urls.length ? m : undefined;
  }, 'the first round', 20_000);
  return { t, attempts: [...d.deliveries[0].attempts].sort((x, y) => x.urlIndex - y.urlIndex) };
}

describe('facts on the attempt, in the call detail', () => {
  it('a hanging receiver: timedOut with the limit it hit (the settings timeout)', async () => {
    const held: ServerResponse[] = [];
    const r = await lab.receiver((_req, res) => void held.push(res));
    try {
      const { t, attempts: [a] } = await attemptsOf([`${r.url}/hang`]);
      expect(a).toMatchObject({ timedOut: true, timeoutMs: 300, tlsError: null, connectError: null, responseStatus: null, outcome: 'retryable' });
      // The attempt event carries the same facts.
      const recorded = await waitFor(() => t.events.find((e) => e.type === 'attempt.recorded'), 'the attempt event');
      expect(recorded.type === 'attempt.recorded' && recorded.attempt).toMatchObject({ timeoutMs: 300, tlsError: null, connectError: null });
    } finally {
      for (const res of held) res.destroy();
    }
  });

  it('a self-signed https receiver: tlsError with its code and kind', async () => {
    const r = await lab.httpsReceiver(await selfSignedCert());
    const { attempts: [a] } = await attemptsOf([`${r.url}/tls`]);
    expect(a).toMatchObject({ timedOut: false, timeoutMs: null, connectError: null, outcome: 'failed' });
    expect(a.tlsError).toEqual({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT', kind: 'self_signed' });
    expect(a.errorCode).toBe(a.tlsError!.code);
  });

  it('a refused port: connectError ECONNREFUSED; an answer: no facts. Both exported as in the detail', async () => {
    const port = await closedPort();
    const ok = await lab.receiver();
    const { t, attempts } = await attemptsOf([`http://127.0.0.1:${port}/gone`, `${ok.url}/ok`]);
    const [refused, answered] = attempts;
    expect(refused).toMatchObject({ timedOut: false, timeoutMs: null, tlsError: null, connectError: { code: 'ECONNREFUSED' }, errorCode: 'ECONNREFUSED' });
    expect(answered).toMatchObject({ responseStatus: 200, timedOut: false, timeoutMs: null, tlsError: null, connectError: null });

    const line = JSON.parse((await t.call('exportDeliveries', { format: 'jsonl' })).content.trim()) as { deliveries: { attempts: Attempt[] }[] };
    const exported = [...line.deliveries[0].attempts].sort((x, y) => x.urlIndex - y.urlIndex);
    expect(exported.map((a) => [a.timeoutMs, a.tlsError, a.connectError])).toEqual([[null, null, { code: 'ECONNREFUSED' }], [null, null, null]]);

    const har = JSON.parse((await t.call('exportDeliveries', { format: 'har' })).content) as { log: { entries: HarEntry[] } };
    const facts = har.log.entries.map((e) => e._webhookLab).sort((x, y) => x.urlIndex - y.urlIndex).map((w) => [w.timeoutMs, w.tlsError, w.connectError]);
    expect(facts).toEqual([[null, null, { code: 'ECONNREFUSED' }], [null, null, null]]);
  });
});

describe('migration 16: attempts made before have their facts from what they recorded', () => {
  it('a timeout its limit, a TLS error its kind, a refused connection its code; the rest null', () => {
    const v = MIGRATIONS.findIndex((m) => m.includes('ADD COLUMN tls_kind'));
    expect(v).toBeGreaterThan(0);
    const dir = lab.dataDir();
    const old = new Database(join(dir, 'webhook-lab.db'));
    registerSearchFunctions(old);
    for (const m of MIGRATIONS.slice(0, v)) old.exec(m);
    old.pragma(`user_version = ${v}`);
    old.prepare("INSERT INTO requests (id, received_at, meta, body) VALUES (1, 1, '{}', '{}')").run();
    old.prepare("INSERT INTO calls (id, source_key, received_at, type, status, request_id) VALUES (1, NULL, 1, 'track', 'accepted', 1)").run();
    old.prepare("INSERT INTO deliveries (id, call_id, source_id, type, state, urls, pending_urls, round, body) VALUES (1, 1, 's', 'track', 'failed', '[{\"url\":\"http://x/\",\"headers\":{}}]', '[]', 1, x'7b7d')").run();
    const insert = old.prepare(`INSERT INTO attempts (delivery_id, round, url_index, url, trigger, started_at, duration_ms, request_headers,
      response_status, error_code, error_message, timed_out, outcome) VALUES (1, ?, 0, 'http://x/', 'scheduled', 1, 7, '{}', ?, ?, ?, ?, ?)`);
    insert.run(1, null, 'TIMEOUT', 'timed out after 10000 ms', 1, 'retryable');
    insert.run(2, null, 'CERT_HAS_EXPIRED', 'TLS: certificate has expired (CERT_HAS_EXPIRED)', 0, 'failed');
    insert.run(3, null, 'ECONNREFUSED', 'connection refused', 0, 'retryable');
    insert.run(4, 200, 'ECONNRESET', 'connection reset by the receiver', 0, 'retryable');
    insert.run(5, 503, null, null, 0, 'retryable');
    insert.run(6, null, 'TIMEOUT', 'no answer', 1, 'retryable');
    old.close();

    const store = new Store({ dataDir: dir });
    try {
      const facts = store.deliveries.forCall(1)[0].attempts.map((a) => [a.round, a.timeoutMs, a.tlsError, a.connectError]);
      expect(facts).toEqual([
        [1, 10000, null, null],
        [2, null, { code: 'CERT_HAS_EXPIRED', kind: 'expired' }, null],
        [3, null, null, { code: 'ECONNREFUSED' }],
        [4, null, null, null],
        [5, null, null, null],
        [6, null, null, null],
      ]);
    } finally {
      store.close();
    }
  });
});
