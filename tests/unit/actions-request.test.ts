import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ACTIONS_USER_AGENT, batchKey } from '../../src/shared/actions/request';
import { buildActionsRequest } from '../../src/main/engine/actions/request';
import type { ActionsMapping, NormalizedCall } from '../../src/shared/types';

const mk = (i: number, props: Record<string, number | boolean>): NormalizedCall => ({
  type: 'track',
  messageId: `m-${i}`,
  event: 'Order Completed',
  properties: props,
  timestamp: '2026-01-01T00:00:00.000Z',
  receivedAt: '2026-01-01T00:00:01.000Z',
});
const first = mk(1, { cool: false });
const second = mk(2, { cool: true });

const mapping = (over: Partial<ActionsMapping> = {}): ActionsMapping => ({
  name: 'orders',
  trigger: { type: 'track' },
  url: 'https://example.com/hook',
  method: 'POST',
  headers: { 'X-Env': 'qa' },
  data: { '@path': '$.properties' },
  ...over,
});

describe('Actions request for one call', () => {
  it('sends the mapped data, signs the same text', () => {
    const r = buildActionsRequest(mapping({ method: 'PUT' }), [first]);
    expect(r).toMatchObject({ url: 'https://example.com/hook', method: 'PUT', body: '{"cool":false}', signedText: '{"cool":false}', callCount: 1, batch: false });
  });

  it("carries the mapping's headers as written; Segment's are added per attempt (request-headers.test.ts)", () => {
    expect(buildActionsRequest(mapping({ headers: { 'X-Env': 'qa', 'User-Agent': 'x' } }), [first]).headers).toEqual({ 'X-Env': 'qa', 'User-Agent': 'x' });
    expect(ACTIONS_USER_AGENT).toBe('Segment (Actions)');
  });

  it('omitted data sends the whole call', () => {
    const r = buildActionsRequest(mapping({ data: undefined }), [first]);
    expect(JSON.parse(r.body)).toEqual(first);
    expect(r.signedText).toBe(r.body);
  });

  it('data that resolves to nothing: no body, no content-type, nothing signed', () => {
    const r = buildActionsRequest(mapping({ data: { '@path': '$.traits' } }), [first]);
    expect(r.body).toBe('');
    expect(r.signedText).toBeNull();
    expect(r.headers['content-type']).toBeUndefined();
  });

  it('refuses more than one call without batching, and none at all', () => {
    expect(() => buildActionsRequest(mapping(), [first, second])).toThrow(/does not batch/);
    expect(() => buildActionsRequest(mapping({ batchSize: 10 }), [])).toThrow();
  });
});

describe('Actions batch', () => {
  const r = buildActionsRequest(mapping({ batchSize: 100 }), [first, second]);

  it('the body is the array of mapped data', () => {
    expect(r.body).toBe('[{"cool":false},{"cool":true}]');
    expect(r).toMatchObject({ batch: true, callCount: 2 });
  });

  it("X-Signature covers the first event's data only, not the body (Segment's trap)", () => {
    expect(r.signedText).toBe('{"cool":false}');
    expect(r.signedText).not.toBe(r.body);
    // What Segment's own test verifies a batch with: HMAC-SHA1 of JSON.stringify(body[0]).
    const body = JSON.parse(r.body) as unknown[];
    const secret = 'abc123';
    expect(createHmac('sha1', secret).update(r.signedText!).digest('hex')).toBe(createHmac('sha1', secret).update(JSON.stringify(body[0])).digest('hex'));
  });

  it('a batching mapping sends an array even for one call', () => {
    expect(buildActionsRequest(mapping({ batchSize: 5 }), [second]).body).toBe('[{"cool":true}]');
  });

  it('an item whose data resolves to nothing is null in the array', () => {
    const b = buildActionsRequest(mapping({ batchSize: 5, data: { '@path': '$.traits' } }), [mk(3, {}), { ...second, traits: { cool: true } }]);
    expect(b.body).toBe('[null,{"cool":true}]');
    expect(b.signedText).toBeNull();
  });
});

describe('batch key', () => {
  it('is the same for the same mapping, whatever the header order or case', () => {
    expect(batchKey(mapping({ headers: { A: '1', b: '2' } }))).toBe(batchKey(mapping({ headers: { B: '2', a: '1' } })));
  });

  it('differs by url, method, headers and mapping', () => {
    const base = batchKey(mapping());
    expect(batchKey(mapping({ url: 'https://example.com/other' }))).not.toBe(base);
    expect(batchKey(mapping({ method: 'PATCH' }))).not.toBe(base);
    expect(batchKey(mapping({ headers: { 'X-Env': 'prod' } }))).not.toBe(base);
    expect(batchKey(mapping({ name: 'other' }))).not.toBe(base);
  });
});
