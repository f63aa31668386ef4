import { describe, expect, it } from 'vitest';
import { NORMALIZE_VERSION, knowsNormalizeVersion, normalizeCall, requestItems } from '../../src/shared/normalize';
import { NORMALIZE_BATCH } from '../fixtures/normalize-batch';

// Normalize once (README, Decisions): a received call's normalized form is rebuilt when read, by the
// rules of the version it was stamped with. These are version 1's records, byte for byte. If this
// fails, a rule changed what old calls read back as: bump NORMALIZE_VERSION and keep the old
// behaviour for version 1 (branch on NormalizeOptions.version), then add the new version's records.
const BODY = NORMALIZE_BATCH;
const VERSION_1 = [
  '{"type":"track","messageId":"m-generated","timestamp":"2025-12-31T23:59:55.000Z","receivedAt":"2026-01-01T00:00:00.000Z","userId":"42","event":"Signed Up","properties":{"plan":"pro"},"context":{"library":{"name":"analytics-go","version":"3.1"},"ip":"10.0.0.1"},"integrations":{"Other":false,"Webhooks":true},"originalTimestamp":"2025-12-31T23:00:05.000Z","sentAt":"2025-12-31T23:00:10.000Z"}',
  '{"type":"group","messageId":"m-2","timestamp":"2025-12-31T23:59:51.123Z","receivedAt":"2026-01-01T00:00:00.000Z","anonymousId":"a-1","groupId":"7","traits":{"size":3},"context":{"library":{"name":"analytics-go","version":"3"},"ip":"10.0.0.1"},"integrations":{"Other":false},"originalTimestamp":"2025-12-31T23:00:00.123Z","sentAt":"2025-12-31T23:00:09.000Z"}',
];

const normalizeAll = (version?: number) => {
  const { items, envelope } = requestItems(BODY, 'batch');
  return items.map((item) => {
    const r = normalizeCall(item, { envelope, receivedAt: Date.parse('2026-01-01T00:00:00.000Z'), newId: () => 'm-generated', version });
    return r.ok ? JSON.stringify(r.call) : r.reason;
  });
};

describe('normalization rules, versioned', () => {
  it('version 1 reads a batch back exactly as it always has', () => {
    expect(normalizeAll(1)).toEqual(VERSION_1);
  });

  it('without a version, the current rules apply', () => {
    expect(normalizeAll()).toEqual(normalizeAll(NORMALIZE_VERSION));
  });

  it('version 2 drops a number JSON cannot carry and makes a messageId well-formed; version 1 reads such calls as it always has', () => {
    const item = { type: 'track', userId: 'u', event: 'E', messageId: 'm-\ud800', properties: { total: Infinity } };
    const read = (version: number) => normalizeCall(item, { receivedAt: Date.parse('2026-01-01T00:00:00.000Z'), version });
    const v1 = read(1);
    expect(v1.ok && [v1.call.messageId, JSON.stringify(v1.call.properties)]).toEqual(['m-\ud800', '{"total":null}']);
    expect(read(2)).toEqual({ ok: false, reason: expect.stringMatching(/^properties\.total: a number beyond what JSON can hold/) });
    const clean = normalizeCall({ ...item, properties: {} }, { receivedAt: 0, version: 2 });
    expect(clean.ok && clean.call.messageId).toBe('m-\ufffd');
  });

  it('a version this build does not have is refused, never answered with the current rules', () => {
    expect(knowsNormalizeVersion(1)).toBe(true);
    expect(knowsNormalizeVersion(NORMALIZE_VERSION)).toBe(true);
    for (const v of [0, -1, 1.5, NaN, NORMALIZE_VERSION + 1]) expect(knowsNormalizeVersion(v)).toBe(false);
    expect(() => normalizeAll(NORMALIZE_VERSION + 1)).toThrow(RangeError);
    expect(() => normalizeAll(0)).toThrow(/version 0 are unknown/);
  });
});
