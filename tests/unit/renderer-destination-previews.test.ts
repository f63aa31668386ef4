import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { destinationPreviews, exampleWebhookId } from '../../src/renderer/features/compose/destination-previews';
import { normalizeForPreview, webhookPreview } from '../../src/shared/preview/webhook-preview';
import { previewActions as enginePreview } from '../../src/main/engine/actions/preview';
import type { WebhookSettings } from '../../src/shared/types';
import { forwardingText } from '../../src/shared/forwarding';

// The engine's previewActions, called as the renderer's API client would (the engine builds Actions requests).
const previewActions = async (...a: Parameters<typeof enginePreview>) => enginePreview(...a);

const NOW = Date.parse('2026-01-02T03:04:05.000Z');
const call = normalizeForPreview(
  { type: 'track', event: 'Order Completed', userId: 'u1', properties: { total: 42, sku: 'a/b' } },
  { context: { library: { name: 'analytics-go', version: '3' } }, sentAt: new Date(NOW).toISOString() },
  NOW,
);
const SECRET = 'shh';
const SW = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const example = { id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: Math.floor(NOW / 1000) };
const hmac = (text: string) => createHmac('sha1', SECRET).update(text, 'utf8').digest('hex');

const webhooks: WebhookSettings = {
  enabled: true,
  urls: [
    { url: 'https://r.example/classic', headers: {} },
    { url: 'https://r.example/classic2', headers: {} },
  ],
  sharedSecret: SECRET,
  mode: 'both',
  mappings: [
    { name: 'orders', trigger: { type: 'track', event: { contains: 'Order' } }, url: 'http://127.0.0.1:9/a', method: 'PUT', headers: { 'X-Team': 'growth' }, data: { total: { '@path': '$.properties.total' } } },
    { name: 'batched', trigger: {}, url: 'https://r.example/batch', method: 'POST', headers: {}, batchSize: 1000 },
    { name: 'pages', trigger: { type: 'page' }, url: 'https://r.example/pages', method: 'POST', headers: {} },
  ],
};

async function build(w: WebhookSettings) {
  const classic = await webhookPreview(call, { format: 'full', userAgentProduct: 'Segment.io', sharedSecret: w.sharedSecret });
  return destinationPreviews({ call, webhooks: w, classic, example, previewActions });
}

describe('Compose: destination previews', () => {
  it('Both: the Classic request, then each matching mapping; the others are named as not matching', async () => {
    const d = await build(webhooks);
    expect(d.requests.map((r) => [r.kind, r.title, r.method, r.url])).toEqual([
      ['classic', 'Classic', 'POST', 'https://r.example/classic'],
      ['actions', 'orders', 'PUT', 'http://127.0.0.1:9/a'],
      ['actions', 'batched', 'POST', 'https://r.example/batch'],
    ]);
    expect(d.requests[0].moreUrls).toBe(1);
    expect(d.skipped).toEqual([{ name: 'pages', trigger: 'type = "page"' }]);
    expect(d.sw).toBeNull();
  });

  it('Classic signs the body bytes; a single Actions request signs JSON.stringify(data), its body', async () => {
    const [classic, orders] = (await build(webhooks)).requests;
    expect(classic.signature).toBe(hmac(classic.body));
    expect(classic.signatureNote).toMatch(/body bytes/);
    expect(orders.body).toBe('{"total":42}');
    expect(orders.signature).toBe(hmac('{"total":42}'));
    expect(orders.headers).toMatchObject({ 'user-agent': 'Segment (Actions)', 'content-type': 'application/json', 'x-team': 'growth', 'x-signature': hmac('{"total":42}') });
    expect(orders.signedText).toBeNull();
    expect(orders.signatureNote).toMatch(/which here is the body/);
    expect(orders.urlWarning).toMatch(/^Segment could not reach this URL from its cloud: 127\.0\.0\.1/);
    expect(orders.trigger).toBe('type = "track" and contains(event, "Order")');
  });

  it('a batch mapping shows a one-item array, signed over the first event data only', async () => {
    const batched = (await build(webhooks)).requests[2];
    const items = JSON.parse(batched.body) as unknown[];
    expect(items).toHaveLength(1);
    expect(batched.signedText).toBe(JSON.stringify(items[0]));
    expect(batched.signature).toBe(hmac(JSON.stringify(items[0])));
    expect(batched.signature).not.toBe(hmac(batched.body));
    expect(batched.signatureNote).toMatch(/FIRST event only/);
    expect(batched.batchNote).toMatch(/JSON array.*up to 1,000/);
  });

  it('Actions only: no Classic request; without a shared secret, unsigned', async () => {
    const d = await build({ ...webhooks, mode: 'actions', sharedSecret: undefined });
    expect(d.requests.map((r) => r.kind)).toEqual(['actions', 'actions']);
    expect(d.requests[0].signature).toBeNull();
    expect(d.requests[0].headers).not.toHaveProperty('x-signature');
    expect(d.requests[0].signatureNote).toBe('unsigned (no shared secret)');
  });

  it('Classic mode ignores the mappings', async () => {
    const d = await build({ ...webhooks, mode: undefined });
    expect(d.requests.map((r) => r.kind)).toEqual(['classic']);
    expect(d.skipped).toEqual([]);
  });

  it('adds Standard Webhooks headers that the standardwebhooks library verifies, for Classic and Actions', async () => {
    const d = await build({ ...webhooks, standardWebhooksSecret: SW });
    expect(d.sw).toEqual(example);
    const wh = new Webhook(SW);
    for (const r of d.requests) {
      expect(r.headers['webhook-id']).toBe(example.id);
      expect(r.headers['webhook-timestamp']).toBe(String(example.timestamp));
      // The library checks the timestamp against now: verify as of the example's time.
      const realNow = Date.now;
      Date.now = () => NOW;
      try {
        expect(wh.verify(r.body, r.headers)).toBeTruthy();
      } finally {
        Date.now = realNow;
      }
    }
  });

  it('makes example ids as the dispatcher does', () => {
    expect(exampleWebhookId()).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
  });
});

describe('Compose: a mapping over its mapped body limit (issue 22 item 5)', () => {
  it('shows that mapping\'s request as not sent, with the reason, beside the others', async () => {
    const copies = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, { '@path': '$.' }]));
    const big = { ...call, properties: { blob: 'x'.repeat(30_000) } };
    const w: WebhookSettings = { ...webhooks, mappings: [{ name: 'huge', trigger: {}, url: 'https://r.example/huge', method: 'POST', headers: {}, data: copies }, webhooks.mappings![0]] };
    const classic = await webhookPreview(big, { format: 'full', userAgentProduct: 'Segment.io', sharedSecret: w.sharedSecret });
    const d = await destinationPreviews({ call: big, webhooks: w, classic, example, previewActions });
    const huge = d.requests.find((r) => r.title === 'huge')!;
    expect(huge).toMatchObject({ body: '', signature: null });
    expect(huge.signatureNote).toMatch(/^not sent: the mapped body passed its limit of [\d.]+ KB/);
    expect(d.requests.map((r) => r.title)).toEqual(['Classic', 'huge', 'orders']);
  });
});

describe('Compose: data that is not an object (issue 23)', () => {
  it('shows that request as not sent with the reason; data that resolves to nothing goes without body or signature', async () => {
    const w: WebhookSettings = {
      ...webhooks,
      mode: 'actions',
      mappings: [
        { name: 'text', trigger: 'type = "track"', url: 'https://r.example/t', method: 'POST', headers: {}, data: { '@path': '$.event' } },
        { name: 'nothing', trigger: {}, url: 'https://r.example/n', method: 'POST', headers: {}, data: { '@path': '$.properties.missing' } },
      ],
    };
    const d = await build(w);
    const [text, nothing] = d.requests;
    expect(text).toMatchObject({ title: 'text', body: '', signature: null });
    expect(text.signatureNote).toBe('not sent: the mapped data is a string ("Order Completed"), not an object: Segment\'s Webhooks (Actions) refuses it (the data field must be an object: a 400 "data must be object", nothing sent)');
    expect(nothing).toMatchObject({ title: 'nothing', body: '', signature: null });
    expect(nothing.headers['content-type']).toBeUndefined();
    expect(nothing.headers['content-length']).toBe('0');
  });
});

describe('Compose: whether the call is forwarded, judged and worded as the inspector does (issue 26)', () => {
  it('no mapping matched: the same reason, mappings and sentence as the call detail', async () => {
    const w: WebhookSettings = { ...webhooks, mode: 'actions', mappings: [webhooks.mappings![2]] };
    const d = await build(w);
    expect(d.requests).toEqual([]);
    expect(d.forwarding).toEqual({ forwarded: false, reason: 'no_mapping_matched', mappings: [{ name: 'pages', trigger: 'type = "page"' }] });
    expect(forwardingText(d.forwarding)).toBe('Not forwarded: no Actions mapping matched it. Not matching: pages (type = "page").');
  });

  it('forwarded when a request goes; integrations and Webhooks off say so', async () => {
    expect((await build(webhooks)).forwarding).toEqual({ forwarded: true });
    expect((await build({ ...webhooks, enabled: false })).forwarding).toEqual({ forwarded: false, reason: 'webhooks_off' });
    const off = { ...call, integrations: { Webhooks: false } };
    const classic = await webhookPreview(off, { format: 'full', userAgentProduct: 'Segment.io', sharedSecret: SECRET });
    const d = await destinationPreviews({ call: off, webhooks, classic, example, previewActions });
    expect(d.forwarding).toEqual({ forwarded: false, reason: 'integrations' });
  });
});
