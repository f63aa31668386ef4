import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { Analytics as NextAnalytics } from '@segment/analytics-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallDetail, CallSummary, Source } from '../../src/shared/types';
import { startTestEngine, waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../helpers/receiver';
import { sentBody } from '../../src/shared/attempt-body';

// The official server-side clients, unmodified, pointed at the collector: every call type goes
// client → collector → store → dispatcher → a real loopback receiver, and the receiver gets the
// documented webhook body, signed over the exact bytes it received.

// analytics-node 6.x ships no types; this is the part of its surface used here.
interface LegacyAnalytics {
  identify(m: object, cb?: (err?: Error) => void): LegacyAnalytics;
  track(m: object, cb?: (err?: Error) => void): LegacyAnalytics;
  page(m: object, cb?: (err?: Error) => void): LegacyAnalytics;
  screen(m: object, cb?: (err?: Error) => void): LegacyAnalytics;
  group(m: object, cb?: (err?: Error) => void): LegacyAnalytics;
  alias(m: object, cb?: (err?: Error) => void): LegacyAnalytics;
  flush(cb?: (err?: Error) => void): Promise<unknown>;
}
const require = createRequire(import.meta.url);
const LegacyAnalyticsCtor = require('analytics-node') as new (writeKey: string, options: object) => LegacyAnalytics;
const LEGACY_VERSION = (require('analytics-node/package.json') as { version: string }).version;
const NEXT_VERSION = (require('@segment/analytics-node/package.json') as { version: string }).version;

const ISO_MS_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The six calls, as each client's methods take them (both use the same message objects). */
const CALLS = {
  identify: { userId: 'rc-user', traits: { email: 'ada@example.com', plan: 'pro' } },
  track: { userId: 'rc-user', event: 'Order Completed', properties: { orderId: 'o-1', total: 42.5, currency: 'EUR' } },
  page: { userId: 'rc-user', category: 'Docs', name: 'Pricing', properties: { path: '/pricing', url: 'https://example.com/pricing', title: 'Pricing' } },
  screen: { userId: 'rc-user', name: 'Home', properties: { variant: 'b' }, context: { device: { model: 'Pixel 8', type: 'android' }, os: { name: 'Android', version: '14' } } },
  group: { userId: 'rc-user', groupId: 'acme', traits: { name: 'Acme Inc', employees: 120 } },
  alias: { userId: 'rc-user', previousId: 'anon-123' },
} as const;
type CallName = keyof typeof CALLS;
// A copy per send: @segment/analytics-node writes context.library into the context object it is given.
const fresh = <K extends CallName>(name: K) => structuredClone(CALLS[name]) as (typeof CALLS)[K];
const NAMES = Object.keys(CALLS) as CallName[];

let te: TestEngine;
let receiver: TestReceiver;
let nextSource: Source;
let legacySource: Source;

beforeAll(async () => {
  receiver = await startReceiver();
  te = await startTestEngine({
    config: {
      sources: [
        webhookSource('analytics-node-next', 'wk_next_client', [`${receiver.url}/next`], 'next-secret'),
        webhookSource('analytics-node-legacy', 'wk_legacy_client', [`${receiver.url}/legacy`], 'legacy-secret'),
      ],
    },
  });
  const sources = await te.call('listSources', {});
  nextSource = sources.find((s) => s.writeKey === 'wk_next_client')!;
  legacySource = sources.find((s) => s.writeKey === 'wk_legacy_client')!;
});

afterAll(async () => {
  await te?.stop();
  await receiver?.close();
});

/** The receiver's requests for one path, keyed by the body's type; each body parsed from the raw bytes. */
async function receivedByType(path: string): Promise<Map<string, { req: ReceivedRequest; body: Record<string, unknown> }>> {
  await waitFor(() => receiver.requests.filter((r) => r.url === path).length >= NAMES.length, `${NAMES.length} webhooks at ${path}`);
  const out = new Map<string, { req: ReceivedRequest; body: Record<string, unknown> }>();
  for (const req of receiver.requests.filter((r) => r.url === path)) {
    const body = JSON.parse(req.body.toString('utf8')) as Record<string, unknown>;
    expect(out.has(body.type as string), `one ${String(body.type)} webhook at ${path}`).toBe(false);
    out.set(body.type as string, { req, body });
  }
  return out;
}

async function storedCalls(source: Source): Promise<CallDetail[]> {
  const page = await te.call('listMessages', { sourceId: source.id });
  return Promise.all(page.items.map((s: CallSummary) => te.call('getMessage', { id: s.id })));
}

/** What every webhook must carry, whatever the client: SPEC §4 body, headers and signature. */
function checkWebhooks(got: Map<string, { req: ReceivedRequest; body: Record<string, unknown> }>, secret: string, library: { name: string; version: string }) {
  expect([...got.keys()].sort()).toEqual([...NAMES].sort());
  for (const [type, { req, body }] of got) {
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('Segment.io/1.0');
    expect(req.headers['x-signature'], type).toBe(createHmac('sha1', secret).update(req.body).digest('hex'));
    expect(body).toMatchObject({ version: 1, type, userId: 'rc-user' });
    expect(body.timestamp, type).toMatch(ISO_MS_Z);
    expect(body.receivedAt, type).toMatch(ISO_MS_Z);
    expect(body.originalTimestamp, type).toMatch(ISO_MS_Z);
    expect(body.sentAt, type).toMatch(ISO_MS_Z);
    expect(typeof body.messageId).toBe('string');
    expect((body.context as { library?: unknown }).library, type).toEqual(library);
    // Server-side bookkeeping of the clients is not part of the webhook body.
    expect(body, type).not.toHaveProperty('_metadata');
    expect(body, type).not.toHaveProperty('writeKey');
  }
  expect(got.get('identify')!.body.traits).toEqual(CALLS.identify.traits);
  expect(got.get('track')!.body).toMatchObject({ event: 'Order Completed', properties: CALLS.track.properties });
  expect(got.get('page')!.body).toMatchObject({ name: 'Pricing', category: 'Docs', properties: CALLS.page.properties });
  expect(got.get('screen')!.body).toMatchObject({ name: 'Home', properties: CALLS.screen.properties, context: CALLS.screen.context });
  expect(got.get('group')!.body).toMatchObject({ groupId: 'acme', traits: CALLS.group.traits });
  expect(got.get('alias')!.body).toMatchObject({ previousId: 'anon-123', userId: 'rc-user', 'Previous ID': 'anon-123', 'User ID': 'rc-user' });
}

/** The stored side: each call arrived through the batch route and the webhook carried its messageId and timestamps. */
function checkStored(calls: CallDetail[], got: Map<string, { body: Record<string, unknown>; req: ReceivedRequest }>, userAgent: RegExp) {
  expect(calls.map((c) => c.call.type).sort()).toEqual([...NAMES].sort());
  for (const { call, deliveries } of calls) {
    expect(call.status, `${call.type}: ${call.dropReason}`).toBe('accepted');
    expect(call.request).toMatchObject({ path: '/v1/batch', writeKeyFrom: 'basic' });
    expect(call.request.userAgent).toMatch(userAgent);
    const raw = call.raw as Record<string, unknown>;
    const { body, req } = got.get(call.type)!;
    expect(body.messageId).toBe(raw.messageId);
    expect(body.messageId).toBe(call.messageId);
    // The client's own timestamp is kept as originalTimestamp (SPEC §3).
    expect(body.originalTimestamp).toBe(new Date(raw.timestamp as string).toISOString());
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0].state).toBe('delivered');
    // The bytes the inspector shows are the bytes the receiver got.
    expect(sentBody(deliveries[0], deliveries[0].attempts[0])).toBe(req.body.toString('utf8'));
  }
}

describe('@segment/analytics-node 3.x', () => {
  // Sends POST {host}{path} with Basic auth (write key as user name) AND writeKey in the body,
  // User-Agent analytics-node-next/latest, body {batch, writeKey, sentAt}; each item carries
  // context.library {name: '@segment/analytics-node', version}, integrations {}, _metadata, messageId, timestamp.
  it(`sends identify, track, page, screen, group, alias through /v1/batch; all arrive signed (v${NEXT_VERSION})`, async () => {
    const analytics = new NextAnalytics({ writeKey: nextSource.writeKey, host: te.collectorUrl, path: '/v1/batch', flushAt: NAMES.length, flushInterval: 100, maxRetries: 0 });
    const errors: unknown[] = [];
    analytics.on('error', (e) => errors.push(e));
    const requests: { url: string; headers: Record<string, string>; body: string }[] = [];
    analytics.on('http_request', (r) => requests.push(r as { url: string; headers: Record<string, string>; body: string }));
    analytics.identify(fresh('identify'));
    analytics.track(fresh('track'));
    analytics.page(fresh('page'));
    analytics.screen(fresh('screen'));
    analytics.group(fresh('group'));
    analytics.alias(fresh('alias'));
    await analytics.closeAndFlush({ timeout: 5000 });
    expect(errors).toEqual([]);

    // What went over the wire: one batch of six.
    expect(requests).toHaveLength(1);
    expect(requests[0].url).toBe(`${te.collectorUrl}/v1/batch`);
    expect(requests[0].headers.Authorization).toBe(`Basic ${Buffer.from(`${nextSource.writeKey}:`).toString('base64')}`);
    const envelope = JSON.parse(requests[0].body) as { batch: { context: unknown }[]; writeKey: string; sentAt: string };
    expect(envelope.writeKey).toBe(nextSource.writeKey);
    expect(envelope.batch).toHaveLength(6);

    const got = await receivedByType('/next');
    checkWebhooks(got, 'next-secret', { name: '@segment/analytics-node', version: NEXT_VERSION });
    await waitFor(async () => (await te.call('listMessages', { sourceId: nextSource.id, status: 'delivered' })).total === 6, 'six delivered');
    const calls = await storedCalls(nextSource);
    checkStored(calls, got, /^analytics-node-next\//);
    expect(calls.every((c) => c.call.request.batchSize === 6)).toBe(true);
  });
});

describe('analytics-node 6.x (legacy)', () => {
  // Sends POST {host}{path} (default /v1/batch) through axios with Basic auth (user name = write
  // key, empty password) and User-Agent analytics-node/<version>; body {batch, timestamp, sentAt}
  // with no writeKey; each item carries context.library {name: 'analytics-node', version},
  // _metadata {nodeVersion}, messageId "node-<md5>-<uuid>" and timestamp. The first call is flushed
  // on its own at once; the rest wait for flushAt or flush().
  it(`sends identify, track, page, screen, group, alias through /v1/batch; all arrive signed (v${LEGACY_VERSION})`, async () => {
    const analytics = new LegacyAnalyticsCtor(legacySource.writeKey, { host: te.collectorUrl, flushAt: 20, flushInterval: 60_000, retryCount: 0 });
    const done: Promise<void>[] = [];
    const cb = () => {
      let settle!: (err?: Error) => void;
      done.push(new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve()))));
      return settle;
    };
    analytics.identify(fresh('identify'), cb());
    analytics.track(fresh('track'), cb());
    analytics.page(fresh('page'), cb());
    analytics.screen(fresh('screen'), cb());
    analytics.group(fresh('group'), cb());
    analytics.alias(fresh('alias'), cb());
    await analytics.flush();
    await Promise.all(done);

    const got = await receivedByType('/legacy');
    checkWebhooks(got, 'legacy-secret', { name: 'analytics-node', version: LEGACY_VERSION });
    for (const { body } of got.values()) expect(body.messageId).toMatch(/^node-[0-9a-f]{32}-[0-9a-f-]{36}$/);
    await waitFor(async () => (await te.call('listMessages', { sourceId: legacySource.id, status: 'delivered' })).total === 6, 'six delivered');
    const calls = await storedCalls(legacySource);
    checkStored(calls, got, new RegExp(`^analytics-node/${LEGACY_VERSION.replace(/\./g, '\\.')}$`));
    // Two requests: the first call alone, then the other five.
    expect(calls.map((c) => c.call.request.batchSize).sort()).toEqual([1, 5, 5, 5, 5, 5]);
  });
});
