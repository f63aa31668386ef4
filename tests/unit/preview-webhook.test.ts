import { readFileSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacSha1Hex, verifySignature } from '../../src/shared/preview/signature';
import { normalizeForPreview, webhookPreview } from '../../src/shared/preview/webhook-preview';
import { userAgentOf } from '../../src/shared/webhook-request';
import { clientRequest } from '../../src/shared/preview/client-request';
import { curlCommand } from '../../src/shared/preview/curl';
import { normalizeCall } from '../../src/shared/normalize';
import type { JsonObject } from '../../src/shared/types';

interface Vector {
  name: string;
  secret: string;
  body: string;
  signature: string | null;
}
const vectors = (JSON.parse(readFileSync(new URL('../fixtures/signature-vectors.json', import.meta.url), 'utf8')) as { cases: Vector[] }).cases;

describe('X-Signature with WebCrypto', () => {
  it.each(vectors.filter((v) => v.signature !== null).map((v) => [v.name, v] as const))('matches the OpenSSL vector: %s', async (_n, v) => {
    expect(await hmacSha1Hex(v.secret, v.body)).toBe(v.signature);
  });

  it('leaves the body unsigned when the secret is empty (the vectors’ decision)', async () => {
    const empty = vectors.find((v) => v.signature === null)!;
    const call = normalizeForPreview({ type: 'identify', userId: 'u', messageId: 'm' }, {}, Date.now());
    const p = await webhookPreview(call, { format: 'full', userAgentProduct: 'Segment.io', sharedSecret: empty.secret });
    expect(p.signature).toBeNull();
    expect(p.headers['X-Signature']).toBeUndefined();
  });
});

describe('webhook body preview', () => {
  const receivedAt = Date.parse('2026-03-01T10:00:01.250Z');
  const req = clientRequest(
    'track',
    { userId: 'u1', event: 'Order Completed', properties: { total: 27.5 }, context: { page: { path: '/cart' } } },
    {
      endpoint: 'http://127.0.0.1:8787',
      writeKey: 'wk',
      messageId: 'msg-1',
      batchMessageId: 'batch-1',
      timestamp: '2026-03-01T10:00:00.000Z',
      sentAt: '2026-03-01T10:00:01.000Z',
    },
  );
  const item = (req.body.batch as JsonObject[])[0];
  const envelope = { context: req.body.context as JsonObject, sentAt: req.body.sentAt as string };

  it('normalizes exactly as the collector does', () => {
    const preview = normalizeForPreview(item, envelope, receivedAt);
    const real = normalizeCall(item, { envelope, receivedAt });
    expect(real.ok).toBe(true);
    expect(preview).toEqual(real.ok && real.call);
    // Clock-skew correction: 1 s between stamp and send, replayed against arrival.
    expect(preview.timestamp).toBe('2026-03-01T10:00:00.250Z');
    expect(preview.context).toEqual({ library: { name: 'webhook-lab-client', version: '0.1.0' }, page: { path: '/cart' } });
  });

  it('gives the exact bytes, headers and signature the receiver gets', async () => {
    const call = normalizeForPreview(item, envelope, receivedAt);
    const p = await webhookPreview(call, {
      format: 'documented',
      userAgentProduct: 'Segment.io',
      sharedSecret: 's3cret',
      headers: { 'X-Env': 'qa', 'Content-Type': 'text/plain' },
    });
    expect(p.body).toBe(
      '{"version":1,"type":"track","userId":"u1","event":"Order Completed","properties":{"total":27.5},' +
        '"timestamp":"2026-03-01T10:00:00.250Z","context":{"library":{"name":"webhook-lab-client","version":"0.1.0"},"page":{"path":"/cart"}}}',
    );
    expect(p.signature).toBe(createHmac('sha1', 's3cret').update(p.body).digest('hex'));
    expect(p.headers).toEqual({
      'User-Agent': 'Segment.io/1.0',
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(p.body)),
      'X-Signature': p.signature,
      'X-Env': 'qa', // a reserved header in the URL's static headers is not allowed to replace ours
    });
    const full = await webhookPreview(call, { format: 'full', userAgentProduct: 'Acme/2.3' });
    expect(JSON.parse(full.body)).toMatchObject({ messageId: 'msg-1', originalTimestamp: '2026-03-01T10:00:00.000Z', receivedAt: '2026-03-01T10:00:01.250Z' });
    expect(full.headers['User-Agent']).toBe('Acme/2.3');
    expect(userAgentOf('')).toBe('Segment.io/1.0');
  });
});

describe('signature verify box', () => {
  const body = '{"version":1,"type":"track","event":"E"}';
  const signature = createHmac('sha1', 'top-secret').update(body).digest('hex');

  it('matches with the right secret', async () => {
    expect((await verifySignature({ body, signature, secret: 'top-secret' })).status).toBe('match');
  });

  it('explains a mismatch caused by whitespace around the pasted secret', async () => {
    const r = await verifySignature({ body, signature, secret: ' top-secret\n' });
    expect(r.status).toBe('mismatch');
    expect(r.explanation).toMatch(/whitespace/);
  });

  it('explains a wrong secret and the re-serialization pitfall', async () => {
    const r = await verifySignature({ body, signature, secret: 'other' });
    expect(r.status).toBe('mismatch');
    expect(r.computed).toBe(createHmac('sha1', 'other').update(body).digest('hex'));
    expect(r.explanation).toMatch(/re-serializing/);
  });

  it('says when nothing was signed, and when no secret was pasted', async () => {
    expect((await verifySignature({ body, signature: null, secret: 'x' })).status).toBe('unsigned');
    expect((await verifySignature({ body, signature, secret: '' })).status).toBe('no-secret');
  });
});

describe('copy as cURL', () => {
  it('quotes for POSIX shells and leaves out headers curl sets itself', () => {
    const cmd = curlCommand({
      url: 'http://127.0.0.1:9/hook',
      headers: { 'Content-Type': 'application/json', 'Content-Length': '12', 'X-Note': "it's" },
      body: `{"a":"it's"}`,
    });
    expect(cmd).toBe(
      [
        "curl -X POST 'http://127.0.0.1:9/hook'",
        "-H 'Content-Type: application/json'",
        `-H 'X-Note: it'\\''s'`,
        `--data-binary '{"a":"it'\\''s"}'`,
      ].join(' \\\n  '),
    );
  });
});
