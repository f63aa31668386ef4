import { describe, expect, it } from 'vitest';
import { ACTIONS_TIMEOUT_MS, CLASSIC_TIMEOUT_MS, retriesStatus, TIMEOUT_MS } from '../../src/shared/actions/retry-classes';

// status → [Classic retries, Actions retries]
const TABLE: Array<[number, boolean, boolean]> = [
  [400, false, false],
  [401, false, false],
  [404, false, false],
  [408, true, true],
  [409, false, false],
  [422, false, false],
  [423, false, true],
  [429, true, true],
  [500, true, true],
  [501, true, false],
  [502, true, true],
  [503, true, true],
  [504, true, true],
  [599, true, true],
];

describe('retry classes', () => {
  it.each(TABLE)('HTTP %i: Classic %s, Actions %s', (status, classic, actions) => {
    expect(retriesStatus('classic', status)).toBe(classic);
    expect(retriesStatus('actions', status)).toBe(actions);
  });

  it('timeouts: Classic 5 s, Actions 10 s', () => {
    expect(CLASSIC_TIMEOUT_MS).toBe(5_000);
    expect(ACTIONS_TIMEOUT_MS).toBe(10_000);
    expect(TIMEOUT_MS).toEqual({ classic: 5_000, actions: 10_000 });
  });
});
