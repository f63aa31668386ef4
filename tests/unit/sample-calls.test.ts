import { describe, expect, it } from 'vitest';
import { SAMPLE_CALLS, sampleCall } from '../../src/shared/sample-calls';
import { NORMALIZE_VERSION } from '../../src/shared/normalize';
import { collectorDropReason, validateMessage } from '../../src/shared/message-rules';
import { normalizeCall } from '../../src/shared/normalize';
import { buildWebhookBody } from '../../src/shared/webhook-body';
import { CALL_TYPES } from '../../src/shared/types';

describe('sample calls', () => {
  it.each(SAMPLE_CALLS.map((s) => [s.id, s] as const))('%s passes the client rules and the collector', (_, s) => {
    expect(validateMessage(s.type, s.message)).toEqual([]);
    expect(collectorDropReason({ ...s.message, type: s.type }, NORMALIZE_VERSION)).toBeNull();
    const r = normalizeCall({ ...s.message, type: s.type }, { receivedAt: Date.UTC(2024, 0, 1) });
    expect(r.ok).toBe(true);
    if (r.ok) expect(buildWebhookBody(r.call, 'documented').type).toBe(s.type);
  });

  it('covers every call type, with unique ids, and the templates the UI names', () => {
    expect(new Set(SAMPLE_CALLS.map((s) => s.type))).toEqual(new Set(CALL_TYPES));
    expect(new Set(SAMPLE_CALLS.map((s) => s.id)).size).toBe(SAMPLE_CALLS.length);
    const events = SAMPLE_CALLS.filter((s) => s.type === 'track').map((s) => s.message.event);
    expect(events).toEqual(expect.arrayContaining(['Order Completed', 'Signed Up']));
  });

  it('Order Completed uses the e-commerce spec property names', () => {
    const props = sampleCall('order-completed')!.message.properties as Record<string, unknown>;
    for (const k of ['order_id', 'total', 'revenue', 'currency', 'products']) expect(props).toHaveProperty(k);
    for (const p of props.products as Record<string, unknown>[]) {
      for (const k of ['product_id', 'sku', 'name', 'price', 'quantity']) expect(p).toHaveProperty(k);
    }
  });

  it('carries no messageId or timestamp, so a template can be sent repeatedly', () => {
    for (const s of SAMPLE_CALLS) {
      expect(s.message).not.toHaveProperty('messageId');
      expect(s.message).not.toHaveProperty('timestamp');
    }
  });

  it('sampleCall returns a copy that callers may edit without changing the template', () => {
    const copy = sampleCall('identify')!;
    (copy.message.traits as Record<string, unknown>).name = 'Changed';
    expect((sampleCall('identify')!.message.traits as Record<string, unknown>).name).toBe('Peter Gibbons');
    expect(sampleCall('nope')).toBeUndefined();
  });
});
