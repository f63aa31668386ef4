import { describe, expect, it } from 'vitest';
import * as client from '../../src/main/engine/client';
import { clientSettingsPatchSchema } from '../../src/shared/api.contract';
import { INGEST_BYTES_IN_FLIGHT, MAX_BATCH_BYTES, MAX_BATCH_ITEMS, MAX_CALL_BYTES } from '../../src/shared/limits';

// The limits have one home (src/shared/limits.ts); the collector imports them directly, and these
// check that the client and the control API contract use the same numbers rather than copies.

describe('size limits (SPEC §3)', () => {
  it('read KB as 1024 bytes: a call 32768 bytes, a batch request 512000 bytes, 2500 items', () => {
    expect([MAX_CALL_BYTES, MAX_BATCH_BYTES, MAX_BATCH_ITEMS]).toEqual([32768, 512000, 2500]);
  });

  it('are the batching client’s published limits, under its own names', () => {
    expect({ message: client.MAX_MESSAGE_BYTES, batch: client.MAX_BATCH_BYTES, items: client.MAX_BATCH_MESSAGES }).toEqual({
      message: MAX_CALL_BYTES,
      batch: MAX_BATCH_BYTES,
      items: MAX_BATCH_ITEMS,
    });
  });

  it('cap the client settings’ flushAt at one batch request’s items', () => {
    expect(clientSettingsPatchSchema.safeParse({ flushAt: MAX_BATCH_ITEMS }).success).toBe(true);
    expect(clientSettingsPatchSchema.safeParse({ flushAt: MAX_BATCH_ITEMS + 1 }).success).toBe(false);
  });

  it('keep the ingest gate at least one full batch request wide (else a lone full batch would always queue behind another)', () => {
    expect(INGEST_BYTES_IN_FLIGHT).toBeGreaterThanOrEqual(MAX_BATCH_BYTES);
  });
});
