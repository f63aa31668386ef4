import { describe, expect, it } from 'vitest';
import { basicAuth, clientItem, clientRequest, formatHttpRequest } from '../../src/shared/preview/client-request';
import { prepareMessage } from '../../src/main/engine/client/message';
import { buildBatchBody } from '../../src/main/engine/client/batches';
import { ByteArena } from '../../src/main/engine/client/byte-arena';

const opts = {
  endpoint: 'http://127.0.0.1:8787/',
  writeKey: 'wk_test',
  messageId: '11111111-1111-4111-8111-111111111111',
  batchMessageId: '22222222-2222-4222-8222-222222222222',
  timestamp: '2026-03-01T10:00:00.000Z',
  sentAt: '2026-03-01T10:00:01.000Z',
};

describe('HTTP API request preview', () => {
  it('is a POST to /v1/batch with Basic auth (write key as user, empty password) and JSON', () => {
    const req = clientRequest('track', { userId: 'u1', event: 'Signed Up' }, opts);
    expect(req.method).toBe('POST');
    expect(req.url).toBe('http://127.0.0.1:8787/v1/batch');
    expect(req.headers.Authorization).toBe(`Basic ${Buffer.from('wk_test:').toString('base64')}`);
    expect(req.headers['Content-Type']).toBe('application/json');
    expect(req.body).toEqual({
      batch: [{ type: 'track', messageId: opts.messageId, timestamp: opts.timestamp, userId: 'u1', event: 'Signed Up' }],
      context: { library: { name: 'webhook-lab-client', version: '0.1.0' } },
      messageId: opts.batchMessageId,
      sentAt: opts.sentAt,
    });
  });

  it('encodes non-ASCII write keys as UTF-8 in Basic auth', () => {
    expect(basicAuth('clé')).toBe(`Basic ${Buffer.from('clé:', 'utf8').toString('base64')}`);
  });

  it('serializes exactly as the app’s batching client does (same bytes for the same message)', () => {
    const message = {
      messageId: opts.messageId,
      userId: 'u1',
      event: 'Order Completed',
      properties: { total: 27.5 },
      timestamp: '2015-12-28T23:40:25-0800',
    };
    const item = clientItem('track', message, opts);
    const real = prepareMessage('track', message, Date.parse(opts.timestamp), new ByteArena());
    expect(JSON.stringify(item)).toBe(real.json);
    // The client rewrites a historical timestamp in UTC with milliseconds.
    expect(item.timestamp).toBe('2015-12-29T07:40:25.000Z');
    const body = clientRequest('track', message, opts).body;
    expect(JSON.stringify(body)).toBe(buildBatchBody([real], opts.batchMessageId, opts.sentAt).toString('utf8'));
  });

  it('formats as an HTTP/1.1 message for display', () => {
    const text = formatHttpRequest(clientRequest('identify', { userId: 'u' }, opts));
    expect(text.split('\n').slice(0, 4)).toEqual([
      'POST /v1/batch HTTP/1.1',
      'Host: 127.0.0.1:8787',
      `Authorization: Basic ${Buffer.from('wk_test:').toString('base64')}`,
      'Content-Type: application/json',
    ]);
    expect(JSON.parse(text.split('\n\n')[1]).batch[0].type).toBe('identify');
  });
});
