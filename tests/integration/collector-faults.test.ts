import { request as httpRequest } from 'node:http';
import { Analytics } from '@segment/analytics-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import { rawExchange } from '../helpers/raw-http';
import { until } from '../helpers/until';
import { mulberry32 as seededRandom } from '../../src/main/engine/seeded-random';
import type { CollectorFaults } from '../../src/shared/collector-faults';
import type { Source } from '../../src/shared/types';

// Collector faults (README, Decisions): each mode over a real socket, nothing stored for a refused
// request, the counters, and the official Node SDK retrying through them.

const DELAY_MS = 300;
const SOURCES: Record<string, CollectorFaults | null> = {
  status: { rate: 1, mode: 'status', status: 503, retryAfterS: 7 },
  delay: { rate: 1, mode: 'delay', delayMs: DELAY_MS },
  hang: { rate: 1, mode: 'hang' },
  reset: { rate: 1, mode: 'reset' },
  calm: null,
};

let t: TestEngine;
const byName = new Map<string, Source>();
const key = (name: string) => `wk_fault_${name}`;
const basic = (name: string) => `Basic ${Buffer.from(`${key(name)}:`).toString('base64')}`;
const port = () => Number(new URL(t.collectorUrl).port);
const stored = async (name: string) => (await t.call('listMessages', { sourceId: byName.get(name)!.id, limit: 1 })).total;
const counts = async (name: string) => (await t.call('getCollectorFaultCounts', {})).sources[byName.get(name)!.id] ?? {};

beforeAll(async () => {
  t = await startTestEngine({
    config: { sources: Object.entries(SOURCES).map(([name, collectorFaults]) => ({ name, writeKey: key(name), collectorFaults })) },
  });
  for (const s of await t.call('listSources', {})) byName.set(s.name, s);
});
afterAll(() => t.stop());

/** A raw POST /v1/track with the source's key, as its own connection. */
const rawTrack = (name: string, o: { signal?: AbortSignal; waitMs?: number } = {}) => {
  const body = JSON.stringify({ userId: 'u', event: 'E' });
  const head = `POST /v1/track HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nauthorization: ${basic(name)}\r\ncontent-length: ${body.length}`;
  return rawExchange(port(), head, body, o);
};

describe('modes', () => {
  it('status: answers the status with Retry-After and stores nothing, whether the key is in Basic auth or the body', async () => {
    const viaBasic = await fetch(`${t.collectorUrl}/v1/track`, {
      method: 'POST',
      headers: { authorization: basic('status'), 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'u', event: 'E' }),
    });
    expect(viaBasic.status).toBe(503);
    expect(viaBasic.headers.get('retry-after')).toBe('7');
    expect(await viaBasic.json()).toEqual({ success: false, message: 'refused by fault injection: answered 503' });
    const viaBody = await t.post('/v1/batch', { writeKey: key('status'), batch: [{ type: 'track', userId: 'u', event: 'E' }] });
    expect(viaBody.status).toBe(503);
    expect(await stored('status')).toBe(0);
    expect(await counts('status')).toEqual({ '503': 2 });
  });

  it('delay: answers no earlier than delayMs, then stores the call as usual', async () => {
    const started = performance.now();
    const r = await t.post('/v1/track', { userId: 'u', event: 'Slow' }, { writeKey: key('delay') });
    expect(performance.now() - started).toBeGreaterThanOrEqual(DELAY_MS);
    expect(r).toEqual({ status: 200, json: { success: true } });
    expect(await stored('delay')).toBe(1);
    expect(await counts('delay')).toEqual({ delay: 1 });
  });

  it('delay longer than the client waits: the late request is still stored, and the retry of it is a duplicate', async () => {
    const call = { userId: 'u', event: 'Gave up', messageId: 'late-1' };
    const aborted = await fetch(`${t.collectorUrl}/v1/track`, {
      method: 'POST',
      headers: { authorization: basic('delay'), 'content-type': 'application/json' },
      body: JSON.stringify(call),
      signal: AbortSignal.timeout(DELAY_MS / 3),
    }).catch((err: Error) => err);
    expect(aborted).toBeInstanceOf(Error);
    const stored = async () => (await t.call('listMessages', { sourceId: byName.get('delay')!.id, q: 'late-1', limit: 5 })).items;
    await until(async () => (await stored()).length === 1);
    expect(await t.post('/v1/track', call, { writeKey: key('delay') })).toEqual({ status: 200, json: { success: true } });
    expect((await stored()).map((c) => [c.status, c.dropReason])).toEqual([['dropped', 'duplicate messageId'], ['accepted', null]]);
  });

  it('hang: never answers; the client gives up, and the collector meanwhile answers others', async () => {
    const giveUp = new AbortController();
    const hung = rawTrack('hang', { signal: giveUp.signal });
    await until(async () => (await counts('hang')).hang === 1);
    expect(await t.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: key('calm') })).toEqual({ status: 200, json: { success: true } });
    giveUp.abort();
    const seen = await hung;
    expect(seen.ended).toBe('aborted');
    expect(seen.text).toBe('');
    expect(await stored('hang')).toBe(0);
    expect(await stored('calm')).toBe(1);
  });

  it('reset: the client sees ECONNRESET and nothing is stored', async () => {
    const code = await new Promise<string | undefined>((resolve) => {
      const req = httpRequest(`${t.collectorUrl}/v1/track`, { method: 'POST', headers: { authorization: basic('reset'), 'content-type': 'application/json' } }, () => resolve('answered'));
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code));
      req.end(JSON.stringify({ userId: 'u', event: 'E' }));
    });
    expect(code).toBe('ECONNRESET');
    expect(await stored('reset')).toBe(0);
    expect(await counts('reset')).toEqual({ reset: 1 });
  });

  it('a hang does not hold up stopping the collector: its connection is closed', async () => {
    const own = await startTestEngine({ config: { sources: [{ name: 'h', writeKey: 'wk_h', collectorFaults: { rate: 1, mode: 'hang' } }] } });
    try {
      const body = JSON.stringify({ userId: 'u', event: 'E' });
      const head = `POST /v1/track HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Basic ${Buffer.from('wk_h:').toString('base64')}\r\ncontent-length: ${body.length}`;
      const hung = rawExchange(Number(new URL(own.collectorUrl).port), head, body, { waitMs: 30_000 });
      await until(async () => Object.keys((await own.call('getCollectorFaultCounts', {})).sources).length === 1);
      await own.stop();
      expect((await hung).ended).not.toBe('timeout');
    } finally {
      await own.stop();
    }
  });
});

describe('settings through the API', () => {
  it('PATCH sets, validates with the field named, and null clears; the sequence and counts follow', async () => {
    const s = byName.get('calm')!;
    await expect(t.call('updateSource', { id: s.id, collectorFaults: { rate: 2, mode: 'status' } })).rejects.toThrow(/collectorFaults\.rate: must be between 0 and 1/);
    const updated = await t.call('updateSource', { id: s.id, collectorFaults: { rate: 1, mode: 'status', status: 429 } });
    expect(updated.collectorFaults).toEqual({ rate: 1, mode: 'status', status: 429 });
    expect((await t.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: key('calm') })).status).toBe(429);
    // A PATCH that does not name collectorFaults leaves them.
    expect((await t.call('updateSource', { id: s.id, name: 'calm' })).collectorFaults).toEqual({ rate: 1, mode: 'status', status: 429 });
    expect((await t.call('updateSource', { id: s.id, collectorFaults: null })).collectorFaults).toBeNull();
    expect((await t.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: key('calm') })).status).toBe(200);
    expect(await counts('calm')).toEqual({ '429': 1 });
    // The config export carries them.
    expect((await t.call('getConfig', {})).sources.find((x) => x.name === 'status')?.collectorFaults).toEqual(SOURCES.status);
  });
});

/** The first seed (from 1) whose first draws at this rate are faults ('1') and passes ('0') as given. */
function seedFor(pattern: string, rate: number): number {
  for (let seed = 1; ; seed++) {
    const next = seededRandom(seed);
    if ([...pattern].every((c) => (next() < rate ? '1' : '0') === c)) return seed;
  }
}

describe('@segment/analytics-node retrying through faults', () => {
  const CALLS = 20;
  const sdk = (writeKey: string, maxRetries: number) =>
    // Two batches of ten. The SDK's backoff is fixed (1–2 s before its first retry): few requests keep this fast.
    new Analytics({ writeKey, host: t.collectorUrl, path: '/v1/batch', flushAt: CALLS / 2, flushInterval: 50, maxRetries });
  const sendAll = async (a: Analytics, tag: string) => {
    const results = await Promise.all(
      Array.from({ length: CALLS }, (_, i) => new Promise<Error | undefined>((resolve) => a.track({ userId: `u${i}`, event: tag }, (err) => resolve(err as Error | undefined)))),
    );
    await a.closeAndFlush();
    return results;
  };

  it('50 % seeded 503: every call is stored exactly once; the refused requests stored nothing, so no retry is a duplicate', async () => {
    // Both batches refused once, then both accepted on their retry, in whichever order they arrive.
    const seed = seedFor('1100', 0.5);
    const s = await t.call('createSource', { name: 'sdk-half', collectorFaults: { rate: 0.5, mode: 'status', status: 503, seed } });
    const a = sdk(s.writeKey, 3);
    const requests: { headers: Record<string, string> }[] = [];
    a.on('http_request', (r) => requests.push(r as { headers: Record<string, string> }));
    const errors = await sendAll(a, 'Half');
    expect(errors).toEqual(Array(CALLS).fill(undefined));
    expect(requests.length).toBe(4);
    expect(requests.filter((r) => r.headers['X-Retry-Count'] === '1').length).toBe(2);
    const page = await t.call('listMessages', { sourceId: s.id, limit: 100 });
    expect(page.total).toBe(CALLS);
    expect(page.items.every((c) => c.status === 'accepted')).toBe(true);
    expect(new Set(page.items.map((c) => c.messageId)).size).toBe(CALLS);
    expect((await t.call('getCollectorFaultCounts', {})).sources[s.id]).toEqual({ '503': 2 });
  });

  it('100 % 503: the SDK gives up after its retries and nothing is stored', async () => {
    const s = await t.call('createSource', { name: 'sdk-all', collectorFaults: { rate: 1, mode: 'status', status: 503 } });
    const errors = await sendAll(sdk(s.writeKey, 1), 'All');
    expect(errors.every((e) => e instanceof Error)).toBe(true);
    expect((await t.call('listMessages', { sourceId: s.id, limit: 1 })).total).toBe(0);
    // Two batches, each tried twice (once, then its one retry).
    expect((await t.call('getCollectorFaultCounts', {})).sources[s.id]).toEqual({ '503': 4 });
  });
});
