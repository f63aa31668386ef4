import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpInput } from '../../src/shared/api.contract';
import type { ProbeReport } from '../../src/shared/probe.contract';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../helpers/receiver';
import { startTestEngine, waitFor, type TestEngine } from '../helpers/engine';

// The actions check (issue 25, check 9): a mapping's method and mapped body, and a batch signed over
// its first event only. A receiver that verifies the batch against the whole body fails it.

const SECRET = 'actions-probe-secret';
let te: TestEngine;
let firstEvent: TestReceiver;
let wholeBody: TestReceiver;

const sign = (text: string | Buffer) => createHmac('sha1', SECRET).update(text).digest('hex');

/** Verifies X-Signature as Segment's docs say for a batch: over the first event's data. */
function signedOverFirst(req: ReceivedRequest): boolean {
  const parsed: unknown = JSON.parse(req.body.toString('utf8'));
  const signed = Array.isArray(parsed) ? JSON.stringify(parsed[0]) : req.body;
  return req.headers['x-signature'] === sign(signed);
}

beforeAll(async () => {
  te = await startTestEngine();
  firstEvent = await startReceiver((req, res) => void res.writeHead(signedOverFirst(req) ? 200 : 401).end());
  wholeBody = await startReceiver((req, res) => void res.writeHead(req.headers['x-signature'] === sign(req.body) ? 200 : 401).end());
  await te.call('createSource', {
    name: 'shop',
    webhooks: {
      enabled: false,
      urls: [],
      mode: 'actions',
      sharedSecret: SECRET,
      mappings: [
        { name: 'orders', trigger: 'type = "track"', url: 'https://hooks.example/orders', method: 'PUT', headers: {}, data: { order: { '@path': '$.event' } } },
        { name: 'batched', trigger: 'type = "track"', url: 'https://hooks.example/batch', method: 'POST', headers: {}, batchSize: 100 },
      ],
    },
  });
});
afterAll(async () => {
  await Promise.all([firstEvent.close(), wholeBody.close()]);
  await te.stop();
});

async function probe(input: OpInput<'startProbe'>): Promise<ProbeReport> {
  const started = await te.call('startProbe', input);
  return waitFor(async () => {
    const r = await te.call('getProbe', { id: started.id });
    return r.state === 'done' ? r : null;
  }, 'the probe to finish', 60_000);
}

const check = (r: ProbeReport) => r.checks.find((c) => c.name === 'actions')!;

describe('probe --mode actions', () => {
  it("sends the mapping's method and mapped body to the probe's URL; Classic body checks are skipped", async () => {
    const r = await probe({ url: `${firstEvent.url}/orders`, secret: SECRET, mode: 'actions', source: 'shop', mapping: 'orders' });
    expect(check(r).verdict).toBe('pass');
    expect(check(r).evidence[0].method).toBe('PUT');
    const put = firstEvent.requests.find((q) => q.method === 'PUT')!;
    expect(put.url).toBe('/orders');
    expect(JSON.parse(put.body.toString('utf8'))).toEqual({ order: 'Order Completed' });
    expect(put.headers['user-agent']).toBe('Segment (Actions)');
    expect(r.checks.find((c) => c.name === 'call-types')!.detail).toMatch(/not run in Actions mode/);
    expect(r.ok).toBe(true);
    // In the inspector, as an Actions delivery of the probe source.
    const detail = await te.call('getMessage', { id: check(r).evidence[0].callId! });
    expect(detail.deliveries[0]).toMatchObject({ kind: 'actions', mapping: 'orders', method: 'PUT' });
  });

  it('a batch signed over its first event passes a receiver that verifies the first event', async () => {
    const r = await probe({ url: `${firstEvent.url}/batch`, secret: SECRET, mode: 'actions', source: 'shop', mapping: 'batched', only: ['actions'] });
    expect(check(r).verdict).toBe('pass');
    const batch = firstEvent.requests.filter((q) => q.url === '/batch').at(-1)!;
    const items = JSON.parse(batch.body.toString('utf8')) as unknown[];
    expect(items).toHaveLength(3);
    expect(batch.headers['x-signature']).not.toBe(sign(batch.body));
  });

  it('fails a receiver that verifies the batch against the whole body, saying how Segment signs it', async () => {
    const r = await probe({ url: `${wholeBody.url}/batch`, secret: SECRET, mode: 'actions', source: 'shop', mapping: 'batched', only: ['actions'] });
    expect(check(r).verdict).toBe('fail');
    expect(check(r).detail).toMatch(/the batch was refused \(HTTP 401\): Segment signs a batch over its first event's data only/);
  });

  it('names the source or mapping that does not exist', async () => {
    await expect(te.call('startProbe', { url: firstEvent.url, mode: 'actions', source: 'shop', mapping: 'nope' })).rejects.toThrow(/mapping: source "shop" has no mapping named "nope" \(mappings: orders, batched\)/);
    await expect(te.call('startProbe', { url: firstEvent.url, mode: 'actions', source: 'nope', mapping: 'orders' })).rejects.toThrow(/source: no source named "nope"/);
  });

  it('refuses a source or mapping in classic mode rather than ignoring it', async () => {
    await expect(te.call('startProbe', { url: firstEvent.url, source: 'shop', mapping: 'orders' })).rejects.toThrow(/source: only in actions mode/);
    await expect(te.call('startProbe', { url: firstEvent.url, mode: 'classic', mapping: 'orders' })).rejects.toThrow(/mapping: only in actions mode/);
  });
});
