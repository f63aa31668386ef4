import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { actionsTagOf, chipOf, outcomeLine, outcomeName } from '../../src/renderer/components/status-chip-model';
import {
  batchMemberships,
  batchPosition,
  deliveryTitle,
  deliveryUrlWarning,
  itemStatuses,
  latestItemStatuses,
  outcomesOf,
  waitingParts,
} from '../../src/renderer/features/inspector/delivery-model';
import { hasStandardWebhooks, labVerdict, laterSecretNote, signatureTarget, verifyStandardWebhooksAttempt } from '../../src/renderer/features/inspector/verify-model';
import { verifySignature } from '../../src/shared/preview/signature';
import { signStandardWebhook } from '../../src/main/engine/dispatcher/standard-webhooks-sign';
import type { Attempt, Delivery, UrlOutcome } from '../../src/shared/types';

type D = Pick<Delivery, 'id' | 'kind' | 'mapping' | 'method' | 'type' | 'callIds' | 'itemCount' | 'urls'>;
const classic: D = { id: 1, kind: 'classic', mapping: null, method: 'POST', type: 'track', itemCount: 1, urls: [{ url: 'https://r.example/c', headers: {} }] };
const batch: D = { id: 7, kind: 'actions', mapping: 'orders', method: 'PUT', type: 'track', itemCount: 3, callIds: [11, 12, 13], urls: [{ url: 'http://127.0.0.1:9/a', headers: {} }] };
const single: D = { id: 8, kind: 'actions', mapping: 'all', method: 'POST', type: 'track', itemCount: 1, urls: [{ url: 'https://hooks.example.com/a', headers: {} }] };

const outcome = (over: Partial<UrlOutcome>): UrlOutcome => ({ url: 'https://r.example/c', state: 'delivered', lastStatus: 200, attempts: 1, startedAt: null, ...over });
const via = (mapping: string, deliveryId: number | null, extra: Partial<NonNullable<UrlOutcome['via']>> = {}) => ({ kind: 'actions' as const, mapping, method: 'PUT' as const, deliveryId, ...extra });

describe('inspector: an Actions delivery', () => {
  it('is titled by its mapping and method', () => {
    expect(deliveryTitle(batch)).toBe('Webhooks (Actions) · orders · PUT');
    expect(deliveryTitle(classic)).toBe('Webhooks delivery');
    // Beside the call's Actions deliveries, the Classic one says which it is.
    expect(deliveryTitle(classic, true)).toBe('Webhooks (Classic) · POST');
    expect(deliveryTitle({ ...classic, type: 'delete' })).toBe('Webhooks delivery (delete notification)');
  });

  it('says when Segment would refuse its URL; never for Classic', () => {
    expect(deliveryUrlWarning(batch)).toMatch(/^Segment could not reach this URL from its cloud: 127\.0\.0\.1/);
    expect(deliveryUrlWarning(single)).toBeNull();
    expect(deliveryUrlWarning({ ...classic, urls: [{ url: 'http://localhost/x', headers: {} }] })).toBeNull();
  });

  it("takes its own outcomes from the call's summary: Classic the URLs without via, Actions its delivery's", () => {
    const urls = [outcome({}), outcome({ url: 'http://127.0.0.1:9/a', via: via('orders', 7) }), outcome({ url: 'https://x/w', via: via('later', null, { waiting: { queued: 1, of: 5 } }) })];
    expect(outcomesOf(classic, urls)).toEqual([urls[0]]);
    expect(outcomesOf(batch, urls)).toEqual([urls[1]]);
    expect(waitingParts(urls)).toEqual([urls[2]]);
  });

  it('knows where a call sits in its batch, and which batches carried a call', () => {
    expect(batchPosition(batch, 12)).toBe(1);
    expect(batchPosition(batch, 99)).toBeNull();
    expect(batchPosition(single, 11)).toBeNull();
    expect(batchMemberships({ deliveries: [classic, batch, single] as unknown as (Delivery & { attempts: Attempt[] })[] }, 13)).toEqual([
      { deliveryId: 7, mapping: 'orders', item: 2, size: 3 },
    ]);
  });
});

describe('per-item statuses of a batch answer', () => {
  it('reads a JSON array as long as the batch, of numbers or objects with a numeric status', () => {
    expect(itemStatuses('[200, 422, 500]', 3)).toEqual([200, 422, 500]);
    expect(itemStatuses('[{"status":200},{"status":409,"error":"dup"},201]', 3)).toEqual([200, 409, 201]);
  });

  it('ignores anything else', () => {
    for (const body of [null, '', 'ok', '{"status":200}', '[200, 201]', '[200, "422", 500]', '[200, {"code": 1}, 500]', '[200, 2.5, 500]']) {
      expect(itemStatuses(body, 3), String(body)).toBeNull();
    }
  });

  it('takes the latest answer that has them', () => {
    const a = (id: number, startedAt: string, responseBody: string | null, responseStatus: number | null = 200) => ({ id, startedAt, responseBody, responseStatus }) as Attempt;
    const attempts = [a(1, '2026-01-01T00:00:01Z', '[500, 500, 500]', 500), a(2, '2026-01-01T00:00:05Z', '[200, 422, 200]'), a(3, '2026-01-01T00:00:09Z', null, null)];
    expect(latestItemStatuses({ itemCount: 3, attempts })).toEqual([200, 422, 200]);
    expect(latestItemStatuses({ itemCount: 3, attempts: [a(4, '2026-01-01T00:00:01Z', 'fine')] })).toBeNull();
  });
});

describe('URL states name Actions requests by their mapping', () => {
  const urls = [outcome({ state: 'failed', lastStatus: 500 }), outcome({ url: 'https://x/a', via: via('orders', 7) }), outcome({ url: 'https://x/b', state: 'pending', lastStatus: null, via: via('later', null, { waiting: { queued: 2, of: 10 } }) })];
  it('in the URL-state chip', () => {
    expect(outcomeName(urls[0])).toBe('https://r.example/c');
    expect(outcomeName(urls[1])).toBe('Actions: orders');
    expect(outcomeLine(urls[0])).toBe('https://r.example/c — failed · HTTP 500');
    expect(outcomeLine(urls[2])).toBe('Actions: later — pending (waiting for its batch: 2 of 10 queued)');
  });

  it("in the status chip's tooltip, one line each, only when there is more than one part or an Actions one", () => {
    const chip = chipOf({ status: 'accepted', dropReason: null, deliveryState: 'delivered', nextAttemptAt: null, urls });
    expect(chip.title).toBe(urls.map(outcomeLine).join('\n'));
    expect(chipOf({ status: 'accepted', dropReason: null, deliveryState: 'delivered', nextAttemptAt: null, urls: [urls[0]] }).title).toBeUndefined();
    expect(chipOf({ status: 'accepted', dropReason: null, deliveryState: 'delivered', nextAttemptAt: null, urls: [urls[1]] }).title).toBe('Actions: orders — delivered · HTTP 200');
  });
  it("in the list's Actions tag: how many Actions parts, coloured by the worst, each one in the tooltip and the spoken text", () => {
    expect(actionsTagOf([urls[0]])).toBeNull();
    expect(actionsTagOf(undefined)).toBeNull();
    const tag = actionsTagOf(urls)!;
    expect([tag.label, tag.short, tag.state]).toEqual(['Actions ×2', 'A×2', 'pending']);
    expect(tag.title).toBe(`Through Webhooks (Actions):\n${outcomeLine(urls[1])}\n${outcomeLine(urls[2])}`);
    expect(tag.spoken).toBe(`, through Webhooks (Actions): ${outcomeLine(urls[1])}; ${outcomeLine(urls[2])}`);
    // A failed part outweighs a waiting one; the Classic URL's failure is the chip's, not the tag's.
    expect(actionsTagOf([urls[0], urls[2], { ...urls[1], state: 'failed' }])!.state).toBe('failed');
    expect(actionsTagOf([urls[0], urls[1]])!.state).toBe('delivered');
  });
});

describe('verify box', () => {
  const SECRET = 'shh';
  const body = '[{"total":10},{"total":20}]';
  const hmac = (text: string) => createHmac('sha1', SECRET).update(text).digest('hex');

  it("checks an Actions batch's X-Signature over the first event's data, and says so", async () => {
    const target = signatureTarget(batch, body);
    expect(target.text).toBe('{"total":10}');
    expect(target.note).toMatch(/FIRST event's data/);
    expect((await verifySignature({ body: target.text, signature: hmac('{"total":10}'), secret: SECRET })).status).toBe('match');
    // Over the raw body, as a receiver might, it does not match.
    expect((await verifySignature({ body, signature: hmac('{"total":10}'), secret: SECRET })).status).toBe('mismatch');
  });

  it('checks Classic and single Actions requests over the body; an edited batch body that is no array over itself', () => {
    expect(signatureTarget(classic, body)).toEqual({ text: body, note: null });
    expect(signatureTarget(single, '{"a":1}')).toEqual({ text: '{"a":1}', note: null });
    expect(signatureTarget(batch, '{"edited":true}').text).toBe('{"edited":true}');
  });

  // The known vector.
  const headers = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
  const swBody = '{"test": 2432232314}';
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

  it('verifies a stored attempt\'s Standard Webhooks signature without the timestamp tolerance, saying how old it is', async () => {
    const r = await verifyStandardWebhooksAttempt({ headers, body: swBody, secret, nowMs: Date.parse('2026-01-01T00:00:00Z') });
    expect(r.status).toBe('match');
    expect(r.explanation).toMatch(/s old: a receiver checking it now would refuse it/);
    const fresh = await verifyStandardWebhooksAttempt({ headers, body: swBody, secret, nowMs: 1614265330_000 + 10_000 });
    expect(fresh.explanation).toMatch(/not checked for a stored attempt/);
  });

  it('names a wrong secret, a changed body, a missing signature and a missing secret', async () => {
    const now = 1614265330_000;
    expect((await verifyStandardWebhooksAttempt({ headers, body: swBody, secret: 'whsec_AAAAAAAA', nowMs: now })).status).toBe('mismatch');
    expect((await verifyStandardWebhooksAttempt({ headers, body: '{"test":2432232314}', secret, nowMs: now })).explanation).toMatch(/no v1 signature matches/);
    expect((await verifyStandardWebhooksAttempt({ headers, body: swBody, secret: 'nope', nowMs: now })).explanation).toMatch(/must start with "whsec_"/);
    expect((await verifyStandardWebhooksAttempt({ headers: {}, body: swBody, secret, nowMs: now })).status).toBe('unsigned');
    expect((await verifyStandardWebhooksAttempt({ headers, body: swBody, secret: ' ', nowMs: now })).status).toBe('no-secret');
    expect(hasStandardWebhooks({ 'Webhook-Signature': 'v1,x' })).toBe(true);
    expect(hasStandardWebhooks({ 'x-signature': 'ab' })).toBe(false);
  });

  it('several signatures (a rotation window\'s): either secret matches, and the explanation says which signature; another secret matches none', async () => {
    const rotated = `whsec_${Buffer.from('the new key, 24 bytes!!!').toString('base64')}`;
    const id = headers['webhook-id'];
    const ts = Number(headers['webhook-timestamp']);
    const both = {
      'Webhook-Id': id,
      'Webhook-Timestamp': String(ts),
      'Webhook-Signature': `${signStandardWebhook({ secret: rotated, id, timestamp: ts, body: swBody })} ${signStandardWebhook({ secret, id, timestamp: ts, body: swBody })}`,
    };
    const now = ts * 1000;
    const withNew = await verifyStandardWebhooksAttempt({ headers: both, body: swBody, secret: rotated, nowMs: now });
    expect(withNew).toMatchObject({ status: 'match', explanation: expect.stringMatching(/^Match: signature 1 of the 2 in webhook-signature \(during a rotation window/) });
    const withOld = await verifyStandardWebhooksAttempt({ headers: both, body: swBody, secret, nowMs: now });
    expect(withOld).toMatchObject({ status: 'match', explanation: expect.stringMatching(/^Match: signature 2 of the 2/) });
    const other = await verifyStandardWebhooksAttempt({ headers: both, body: swBody, secret: 'whsec_AAAAAAAA', nowMs: now });
    expect(other).toMatchObject({ status: 'mismatch', explanation: expect.stringMatching(/^Mismatch: none of the 2 v1 signatures/) });
  });

  it("after a rotation, the source's secret on an older attempt: says which version signed it and that the source's is later, naming no secret", () => {
    const current = { version: 3, createdAt: '2026-01-02T00:00:00.000Z', rotated: true };
    const sw = laterSecretNote({ which: 'standard', current, signedWith: 1 });
    expect(sw).toMatch(/signed with version 1 of the source's Standard Webhooks secret; the source's secret is now version 3, a later one/);
    expect(sw).not.toMatch(/whsec_/);
    // Signed with the current version (or unknown): the lab cannot tell more than the generic mismatch.
    expect(laterSecretNote({ which: 'standard', current, signedWith: 3 })).toBeNull();
    expect(laterSecretNote({ which: 'standard', current, signedWith: null })).toBeNull();
    expect(laterSecretNote({ which: 'standard', current: null, signedWith: 1 })).toBeNull();
    // Classic: X-Signature is signed when the delivery is made; a current version made later is not the one.
    expect(laterSecretNote({ which: 'shared', current, signedBy: '2026-01-01T00:00:00.000Z' })).toMatch(/an earlier version of the source's shared secret; the source's secret is now version 3, made after this delivery/);
    expect(laterSecretNote({ which: 'shared', current, signedBy: '2026-01-03T00:00:00.000Z' })).toBeNull();
  });

  it("the lab's own check of an older attempt: the version that matched, or 'since retired' once erased; never asks to paste a kept version", () => {
    const kept = labVerdict({ which: 'shared', matchedVersion: 1, madeWith: { version: 1, kept: true }, current: 2, tried: [2, 1] });
    expect(kept).toEqual({
      status: 'match',
      explanation: "Signed with version 1 of the source's shared secret: ✓ match (the source's is now version 2). The lab keeps that version until nothing needs it; it was checked without being shown.",
    });
    const retired = labVerdict({ which: 'standard', matchedVersion: null, madeWith: { version: 1, kept: false }, current: 3, tried: [3] });
    expect(retired.status).toBe('no-secret');
    expect(retired.explanation).toMatch(/^Signed with version 1 of the source's Standard Webhooks secret, since retired \(the source's is now version 3\): the lab no longer keeps it/);
    const wrong = labVerdict({ which: 'shared', matchedVersion: null, madeWith: { version: 1, kept: true }, current: 2, tried: [2, 1] });
    expect(wrong).toMatchObject({ status: 'mismatch' });
    expect(wrong.explanation).toMatch(/no version of the source's shared secret the lab keeps \(version 2, version 1\) made this signature/);
    for (const v of [kept, retired, wrong]) expect(v.explanation).not.toMatch(/[Pp]aste the earlier|Paste version/);
  });
});
