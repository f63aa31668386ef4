import { describe, expect, it } from 'vitest';
import { destinationPreviews } from '../../src/renderer/features/compose/destination-previews';
import { previewActions } from '../../src/main/engine/actions/preview';
import type { WebhookSettings } from '../../src/shared/types';
import { waitFor } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';

// Issue 26: the Compose preview of an Actions request and the request the dispatcher sends come from
// the same builders (the engine's buildActionsRequest, shared/webhook-request.ts
// buildActionsRequestHeaders): for the same call, the preview's headers and body are what a real
// receiver gets, an empty body's `content-length: 0` included. Only what the HTTP client adds (host,
// connection) is not in the preview.
const lab = testLab();

describe('Compose preview and the wire', () => {
  it('an Actions body that resolves to nothing, and one that does not: the same headers and bytes as received', async () => {
    const receiver = await lab.receiver();
    const webhooks: WebhookSettings = {
      enabled: true,
      mode: 'actions',
      sharedSecret: 'wire-secret',
      urls: [],
      mappings: [
        { name: 'empty', trigger: { type: 'track' }, url: `${receiver.url}/empty`, method: 'POST', headers: { 'X-Team': 'growth' }, data: { '@path': '$.properties.missing' } },
        { name: 'full', trigger: { type: 'track' }, url: `${receiver.url}/full`, method: 'PUT', headers: {}, data: { total: { '@path': '$.properties.total' } } },
      ],
    };
    const t = await lab.start({ config: { sources: [{ name: 'wire', writeKey: 'wk_wire', webhooks }] } });
    await t.post('/v1/track', { userId: 'u1', event: 'Wire', properties: { total: 7 } }, { writeKey: 'wk_wire' });
    const got = await receiver.waitForRequests(2);
    const id = (await waitFor(async () => (await t.call('listMessages', { limit: 1 })).items[0] ?? null, 'the call')).id;
    const call = (await t.call('getMessage', { id })).call.normalized!;
    const preview = await destinationPreviews({ call, webhooks, classic: null, example: { id: 'msg_x', timestamp: 0 }, previewActions: async (c, m) => previewActions(c, m) });

    for (const name of ['empty', 'full']) {
      const p = preview.requests.find((r) => r.title === name)!;
      const wire = got.find((r) => r.url === `/${name}`)!;
      const { host: _host, connection: _connection, ...received } = wire.headers as Record<string, string>;
      expect(received).toEqual(p.headers);
      expect(wire.method).toBe(p.method);
      expect(wire.body.toString('utf8')).toBe(p.body);
    }
    const empty = preview.requests.find((r) => r.title === 'empty')!;
    expect(empty.body).toBe('');
    expect(empty.headers['content-length']).toBe('0');
    expect(empty.headers['x-signature']).toBeUndefined();
  });
});

describe('a mapping URL Segment refuses (issue 37, item 3)', () => {
  it('a URL with non-ASCII characters or a space is no valid URI: not sent, with Segment\'s own message, in the preview and the delivery', async () => {
    const receiver = await lab.receiver();
    const refused = [`${receiver.url}/wébhook/日本`, `${receiver.url}/a?c=ü`, `${receiver.url}/a b`];
    const webhooks: WebhookSettings = {
      enabled: true,
      mode: 'actions',
      urls: [],
      mappings: [
        ...refused.map((url, i) => ({ name: `refused-${i}`, trigger: { type: 'track' }, url, method: 'POST' as const, headers: {}, data: { e: { '@path': '$.event' } } })),
        { name: 'batched', trigger: { type: 'track' }, url: refused[0]!, method: 'POST' as const, headers: {}, batchSize: 10 },
        { name: 'taken', trigger: { type: 'track' }, url: `${receiver.url}/ok%C3%A9`, method: 'POST' as const, headers: {}, data: { e: { '@path': '$.event' } } },
      ],
    };
    const t = await lab.start({ config: { sources: [{ name: 'uri', writeKey: 'wk_uri', webhooks }] } });
    await t.post('/v1/track', { userId: 'u1', event: 'Uri' }, { writeKey: 'wk_uri' });
    const got = await receiver.waitForRequests(1);
    expect(got.map((r) => r.url)).toEqual(['/ok%C3%A9']);
    const id = (await waitFor(async () => (await t.call('listMessages', { limit: 1 })).items[0] ?? null, 'the call')).id;
    const detail = await waitFor(async () => {
      const d = await t.call('getMessage', { id });
      return d.deliveries.length === webhooks.mappings!.length ? d : null;
    }, 'every mapping\'s delivery');
    const segments = /Segment's payload validation refuses the mapping's URL: URL must be a valid URI string but it was not\./;
    for (const name of ['refused-0', 'refused-1', 'refused-2', 'batched']) {
      const d = detail.deliveries.find((x) => x.mapping === name)!;
      expect(d.state, name).toBe('failed');
      expect(d.attempts, name).toEqual([]);
      expect(d.lastError, name).toMatch(segments);
    }
    const preview = previewActions(detail.call.normalized!, webhooks.mappings!);
    expect(preview.find((p) => p.name === 'refused-0')!.notSent).toMatch(segments);
    expect(preview.find((p) => p.name === 'taken')!.notSent).toBeNull();
    expect(receiver.requests).toHaveLength(1);
    // Kept when a config gives it, with a warning naming the field (the lab's check is Segment's).
    const imported = await t.call('importConfig', { sources: [{ name: 'uri', writeKey: 'wk_uri', webhooks }] } as never);
    expect(imported.warnings.filter((w) => w.code === 'segment_refuses_url').map((w) => w.path)).toEqual([0, 1, 2, 3].map((j) => `sources[0].webhooks.mappings[${j}].url`));
    expect(imported.warnings.find((w) => w.code === 'segment_refuses_url')!.message).toMatch(/^URL must be a valid URI string but it was not\. Segment sends nothing for this mapping, and neither does the lab/);
  });
});

it('items queued for a batch whose mapping URL is then edited into one Segment refuses are not sent, saying why (review of issue 37, item 3)', async () => {
  const receiver = await lab.receiver();
  const mapping = { name: 'later', trigger: { type: 'track' }, url: `${receiver.url}/batch`, method: 'POST' as const, headers: {}, batchSize: 10 };
  const webhooks: WebhookSettings = { enabled: true, mode: 'actions', urls: [], mappings: [mapping] };
  const t = await lab.start({ config: { sources: [{ name: 'edit', writeKey: 'wk_edit', webhooks }] } });
  await t.post('/v1/track', { userId: 'u1', event: 'Queued' }, { writeKey: 'wk_edit' });
  const [source] = await t.call('listSources', {});
  await t.call('updateSource', { id: source.id, webhooks: { ...source.webhooks, mappings: [{ ...mapping, url: `${receiver.url}/bätch` }] } });
  const id = (await waitFor(async () => (await t.call('listMessages', { limit: 1 })).items[0] ?? null, 'the call')).id;
  // The batch goes (or not) 5 s after its first item.
  const d = await waitFor(async () => (await t.call('getMessage', { id })).deliveries.find((x) => x.state !== 'pending') ?? null, 'the batch settled', 60_000);
  // Ended by the edit, as a batch whose mapping stopped batching is: canceled, with Segment's reason.
  expect(d.state).toBe('canceled');
  expect(d.lastError).toMatch(/^not sent: Segment's payload validation refuses the mapping's URL: URL must be a valid URI string/);
  expect(receiver.requests).toHaveLength(0);
}, 90_000);
