import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { ReceivedRequest } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';
import { ROOT } from '../helpers/serve';

// docs/actions.md's worked example, run: the source and the track call are read from the page itself
// (so the page cannot drift from what the lab does), its receiver URLs pointed at a real local
// receiver, and what arrives is checked against the page's table.

const lab = testLab();
const doc = readFileSync(join(ROOT, 'docs/actions.md'), 'utf8');
const example = doc.slice(doc.indexOf('## One example'), doc.indexOf('\n## ', doc.indexOf('## One example') + 1));

/** The example's source: the first JSON block of the section. */
function docSource(): { name: string; writeKey: string; webhooks: { sharedSecret: string; standardWebhooksSecret: string } & Record<string, unknown> } {
  const block = /```json\n([\s\S]*?)\n```/.exec(example);
  if (!block) throw new Error('docs/actions.md: no JSON block under "One example"');
  return JSON.parse(block[1]);
}

/** The example's call: the object literal in `analytics.track({...})`. */
function docTrack(): Record<string, unknown> {
  const m = /`analytics\.track\((\{[^`]*\})\)`/.exec(example);
  if (!m) throw new Error('docs/actions.md: no analytics.track(...) call under "One example"');
  return new Function(`return (${m[1]});`)() as Record<string, unknown>;
}

/** A row of the example's table by its first cell: the code in each column (Classic, "orders", "all-events"). */
function docRow(name: string): string[] {
  const line = example.split('\n').find((l) => l.startsWith(`| ${name} |`));
  if (!line) throw new Error(`docs/actions.md: no table row "${name}"`);
  return line.split('|').slice(2, 5).map((cell) => /`([^`]*)`/.exec(cell)?.[1] ?? cell.trim());
}

const hmacSha1 = (secret: string, text: string | Buffer) => createHmac('sha1', secret).update(text).digest('hex');
/** Header names as they went over the wire (rawHeaders keeps their case). */
const rawNames = (r: ReceivedRequest) => r.rawHeaders.filter((_, i) => i % 2 === 0);

describe('docs/actions.md, One example', () => {
  it('the documented source and track call reach the receivers exactly as the table says', async () => {
    const receiver = await lab.receiver();
    const original = docSource();
    // The page's receiver (http://127.0.0.1:8789) becomes the test's.
    const text = JSON.stringify(original).replaceAll('http://127.0.0.1:8789', receiver.url);
    expect(text).not.toBe(JSON.stringify(original));
    const src = JSON.parse(text) as ReturnType<typeof docSource>;
    const { sharedSecret, standardWebhooksSecret } = src.webhooks;

    const t = await lab.start();
    await t.call('createSource', src as never);
    const call = docTrack();
    expect(call).toMatchObject({ userId: 'u1', event: 'Order Completed' });
    const sentAt = Date.now();
    expect((await t.post('/v1/track', call, { writeKey: src.writeKey })).status).toBe(200);

    const byPath = async (path: string, ms?: number) => {
      await receiver.waitForRequests(1, ms);
      for (const until = Date.now() + (ms ?? 10_000); Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
        const found = receiver.requests.find((r) => r.url === path);
        if (found) return found;
      }
      throw new Error(`nothing arrived at ${path}`);
    };
    const standard = new Webhook(standardWebhooksSecret);
    const [classicRequest, ordersRequest, batchRequest] = docRow('request');
    const userAgents = docRow('User-Agent');
    expect(docRow('body')[1]).toMatch(/^\{"order"/);

    // Classic: POST /ok, the Classic body, X-Signature over its bytes, Segment.io/1.0, names as written.
    const classic = await byPath('/ok');
    expect(`${classic.method} ${classic.url}`).toBe(classicRequest);
    const classicBody = JSON.parse(classic.body.toString()) as Record<string, unknown>;
    expect(classicBody).toMatchObject({ type: 'track', event: 'Order Completed', properties: { orderId: 'o-9', total: 42 } });
    expect(classicBody).toHaveProperty('version');
    expect(classic.headers['x-signature']).toBe(hmacSha1(sharedSecret, classic.body));
    expect(classic.headers['user-agent']).toBe(userAgents[0]);
    expect(rawNames(classic)).toContain('X-Signature');
    expect(() => standard.verify(classic.body.toString(), classic.headers as Record<string, string>)).not.toThrow();

    // Actions "orders": PUT /orders with the mapped data, signed over JSON.stringify(data) = the body.
    const orders = await byPath('/orders');
    expect(`${orders.method} ${orders.url}`).toBe(ordersRequest);
    expect(orders.body.toString()).toBe(docRow('body')[1]);
    expect(orders.body.toString()).toBe('{"order":"o-9","total":42,"who":"user u1","source":"lab"}');
    expect(orders.headers['x-signature']).toBe(hmacSha1(sharedSecret, orders.body));
    expect(orders.headers['user-agent']).toBe(userAgents[1]);
    expect(orders.headers['x-team']).toBe('checkout');
    // Header names lowercased, the mapping's own included.
    expect(rawNames(orders).filter((n) => n !== n.toLowerCase())).toEqual([]);
    expect(rawNames(orders)).toContain('x-team');
    expect(() => standard.verify(orders.body.toString(), orders.headers as Record<string, string>)).not.toThrow();

    // Actions "all-events": one call of a batch of 100 goes 5 s after it came, as an array of the
    // whole event, X-Signature over the first event's data only.
    const batch = await byPath('/batch', 15_000);
    expect(batch.receivedAt - sentAt).toBeGreaterThanOrEqual(4_900);
    expect(`${batch.method} ${batch.url}`).toBe(batchRequest);
    const items = JSON.parse(batch.body.toString()) as Record<string, unknown>[];
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'track', userId: 'u1', event: 'Order Completed', properties: { orderId: 'o-9', total: 42 } });
    expect(batch.headers['x-signature']).toBe(hmacSha1(sharedSecret, JSON.stringify(items[0])));
    expect(batch.headers['x-signature']).not.toBe(hmacSha1(sharedSecret, batch.body));
    expect(batch.headers['user-agent']).toBe(userAgents[2]);
    expect(rawNames(batch).filter((n) => n !== n.toLowerCase())).toEqual([]);
    expect(() => standard.verify(batch.body.toString(), batch.headers as Record<string, string>)).not.toThrow();

    // Each request its own webhook-id; nothing else arrived.
    expect(new Set([classic, orders, batch].map((r) => r.headers['webhook-id'])).size).toBe(3);
    expect(receiver.requests.map((r) => `${r.method} ${r.url}`).sort()).toEqual(['POST /batch', 'POST /ok', 'PUT /orders']);
  }, 30_000);
});
