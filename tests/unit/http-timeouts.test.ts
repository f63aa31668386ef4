import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DRAIN_MS, HTTP_TIMEOUTS, fastifyServerOptions, nodeServerOptions } from '../../src/main/engine/http-timeouts';

// The limits every server of the app applies (issue 13, finding 4) are the ones the docs state.
const ROOT = join(__dirname, '../..');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const receiversDoc = readFileSync(join(ROOT, 'docs/mock-receivers.md'), 'utf8');

function seconds(text: string, pattern: RegExp): number {
  const m = pattern.exec(text);
  if (!m) throw new Error(`not in the docs: ${pattern}`);
  return Number(m[1]) * 1000;
}

describe('HTTP timeouts', () => {
  it('the defaults are what the README says', () => {
    expect(HTTP_TIMEOUTS).toEqual({
      headersMs: seconds(readme, /headers have not all arrived within \*\*(\d+) s\*\*/),
      requestMs: seconds(readme, /has not arrived whole within \*\*(\d+) s\*\*/),
      keepAliveMs: seconds(readme, /idle keep-alive connection is closed after \*\*(\d+) s\*\*/),
      checkIntervalMs: /\(checked every second\)/.test(readme) ? 1000 : NaN,
    });
    expect(DRAIN_MS).toBe(seconds(readme, /thrown away for up to \*\*(\d+) s\*\*/));
  });

  it('docs/mock-receivers.md states the same', () => {
    expect(seconds(receiversDoc, /at most \*\*(\d+) s\*\* for a request's headers/)).toBe(HTTP_TIMEOUTS.headersMs);
    expect(seconds(receiversDoc, /\*\*(\d+) s\*\* for the whole request/)).toBe(HTTP_TIMEOUTS.requestMs);
    expect(seconds(receiversDoc, /keep-alive connection is\s+closed after \*\*(\d+) s\*\*/)).toBe(HTTP_TIMEOUTS.keepAliveMs);
  });

  it('Node accepts them: headers within the request timeout, checked well within both', () => {
    expect(HTTP_TIMEOUTS.headersMs).toBeLessThanOrEqual(HTTP_TIMEOUTS.requestMs);
    expect(HTTP_TIMEOUTS.checkIntervalMs).toBeLessThan(HTTP_TIMEOUTS.headersMs / 2);
    expect(nodeServerOptions(HTTP_TIMEOUTS)).toEqual({ headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 });
    // Fastify sets requestTimeout and keepAliveTimeout on the server itself (its default requestTimeout, 0, is none).
    expect(fastifyServerOptions(HTTP_TIMEOUTS, (m) => m)).toMatchObject({ requestTimeout: 30_000, keepAliveTimeout: 10_000 });
  });
});
