// Request bodies of the load: a realistic ~400-byte track call, with a unique messageId per call so
// the collector's de-duplication never turns load into "duplicate messageId" drops.

const TIMESTAMP = '2026-11-21T10:00:00.000Z';

/** One track call as the official SDKs send it (without the envelope). */
export function trackItem(messageId, properties = '') {
  return (
    `{"type":"track","userId":"user-4c1f0a9e","event":"Order Completed","messageId":"${messageId}",` +
    `"timestamp":"${TIMESTAMP}","properties":{"orderId":"ord-20261121-0042","revenue":42.5,"currency":"USD",` +
    `"products":[{"sku":"sku-1337","name":"Lab Widget","price":21.25,"quantity":2}]${properties}},` +
    `"context":{"ip":"203.0.113.7","library":{"name":"analytics-node","version":"3.1.0"}}}`
  );
}

/** A single call body (POST /v1/track): the item itself plus sentAt. */
export function trackBody(messageId, properties = '') {
  return `${trackItem(messageId, properties).slice(0, -1)},"sentAt":"${TIMESTAMP}"}`;
}

/** A batch body (POST /v1/batch) of `size` track calls with ids `${prefix}-0` ... */
export function batchBody(prefix, size) {
  const items = new Array(size);
  for (let k = 0; k < size; k++) items[k] = trackItem(`${prefix}-${k}`);
  return `{"batch":[${items.join(',')}],"sentAt":"${TIMESTAMP}","context":{"library":{"name":"bench","version":"1.0.0"}}}`;
}

export const basicAuth = (writeKey) => `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
