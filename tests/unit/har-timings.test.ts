import { describe, expect, it } from 'vitest';
import { harTimings } from '../../src/main/engine/simulation/export-har';

// HAR timings from what the dispatcher recorded (issue 26: HAR exports carry connect/TLS/first-byte).

describe('HAR timings of an attempt', () => {
  it('a new TLS connection: connect includes ssl, then wait to the first byte, then receive', () => {
    expect(harTimings({ durationMs: 40, timing: { connectMs: 2.5, tlsMs: 7.5, ttfbMs: 30, totalMs: 40, reused: false } })).toEqual({
      blocked: -1, dns: -1, connect: 10, ssl: 7.5, send: 0, wait: 20, receive: 10,
    });
  });
  it('a reused connection has no connect or ssl phase', () => {
    expect(harTimings({ durationMs: 12, timing: { connectMs: null, tlsMs: null, ttfbMs: 9, totalMs: 12, reused: true } })).toEqual({
      blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: 9, receive: 3,
    });
  });
  it('no answer (a timeout): all of it after connecting is wait', () => {
    expect(harTimings({ durationMs: 5000, timing: { connectMs: 1, tlsMs: null, ttfbMs: null, totalMs: 5000, reused: false } })).toEqual({
      blocked: -1, dns: -1, connect: 1, ssl: -1, send: 0, wait: 4999, receive: 0,
    });
  });
  it('an attempt with no recorded timing (no socket, or older than timings) reports its whole time as wait', () => {
    expect(harTimings({ durationMs: 17, timing: null })).toEqual({ blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: 17, receive: 0 });
  });
});
