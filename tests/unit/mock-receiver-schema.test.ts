import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mockReceiverSchema, mockReceiversSchema } from '../../src/shared/mock-receiver.schema';
import { fieldErrors } from '../../src/shared/validation-error';

function errors(schema: typeof mockReceiverSchema | typeof mockReceiversSchema, input: unknown, prefix: PropertyKey[] = []) {
  const r = schema.safeParse(input);
  if (r.success) throw new Error(`expected a failure, parsed ${JSON.stringify(r.data)}`);
  return fieldErrors(r.error, prefix);
}

describe('mock receiver schema', () => {
  it('accepts the SPEC §8 config example and fills defaults', () => {
    const r = mockReceiverSchema.parse({ name: 'flaky', path: '/flaky', behavior: { failFirst: 3, status: 500 } });
    expect(r).toEqual({ name: 'flaky', path: '/flaky', tls: false, behavior: { failFirst: 3, status: 500 } });
  });

  it('accepts every behavior and a minimal entry', () => {
    const entries = [
      { name: 'ok', path: '/ok' },
      { id: 'r1', name: 'slow', path: '/slow', secret: 's3cret', tls: true, behavior: { delayMs: 6000 } },
      { name: 'jitter', path: '/jitter', behavior: { delay: { minMs: 100, maxMs: 900 }, seed: 7 } },
      { name: 'hang', path: '/hang', behavior: { hang: true } },
      { name: 'coin', path: '/coin', behavior: { failPercent: 50, seed: 42, status: 503 } },
      { name: 'reset', path: '/reset', behavior: { reset: true, failFirst: 2 } },
      { name: 'limited', path: '/a/b-c_d.e', behavior: { status: 429, body: '{"error":"slow down"}', headers: { 'Retry-After': '2' } } },
    ];
    expect(mockReceiversSchema.parse(entries)).toHaveLength(entries.length);
  });

  it('refuses an unknown key with its path', () => {
    expect(errors(mockReceiverSchema, { name: 'x', path: '/x', behavior: { failfirst: 3 } })).toEqual([
      { path: 'behavior.failfirst', message: 'unknown key' },
    ]);
    expect(errors(mockReceiversSchema, [{ name: 'x', path: '/x', colour: 'red' }], ['mockReceivers'])).toEqual([
      { path: 'mockReceivers[0].colour', message: 'unknown key' },
    ]);
    expect(errors(mockReceiverSchema, { name: 'x', path: '/x', behavior: { delay: { minMs: 1, max: 2 } } }).map((e) => e.path)).toContain(
      'behavior.delay.max',
    );
  });

  it('refuses contradictory or meaningless behaviors, naming the field', () => {
    const cases: [unknown, string][] = [
      [{ delayMs: 10, delay: { minMs: 1, maxMs: 2 } }, 'behavior.delay'],
      [{ delay: { minMs: 5, maxMs: 2 } }, 'behavior.delay.maxMs'],
      [{ hang: true, reset: true }, 'behavior.reset'],
      [{ failFirst: 3, status: 200 }, 'behavior.status'],
      [{ seed: 1 }, 'behavior.seed'],
      [{ status: 99 }, 'behavior.status'],
      [{ failPercent: 101 }, 'behavior.failPercent'],
      [{ delayMs: -1 }, 'behavior.delayMs'],
      [{ headers: { 'Content-Length': '5' } }, 'behavior.headers.Content-Length'],
      [{ headers: { 'bad name': 'x' } }, 'behavior.headers.bad name'],
    ];
    for (const [behavior, path] of cases) {
      expect(errors(mockReceiverSchema, { name: 'x', path: '/x', behavior }).map((e) => e.path), JSON.stringify(behavior)).toContain(path);
    }
  });

  it('takes per-item answers and a Standard Webhooks secret', () => {
    const ok = [
      { name: 'items', path: '/items', behavior: { itemStatuses: [200, 500, 422] } },
      { name: 'items-207', path: '/items-207', behavior: { itemStatuses: [200, 500], batchStatus: 200, headers: { 'X-Batch': '1' } } },
      { name: 'share', path: '/share', behavior: { itemFailPercent: 10, seed: 3, itemFailStatus: 503 } },
      { name: 'gated', path: '/gated', behavior: { failFirst: 2, status: 503, itemStatuses: [200, 400] } },
      { name: 'gated-hang', path: '/gated-hang', behavior: { failPercent: 20, hang: true, itemFailPercent: 5 } },
      { name: 'sw', path: '/sw', standardWebhooksSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
    ];
    expect(mockReceiversSchema.parse(ok)).toHaveLength(ok.length);
  });

  it('refuses per-item settings that contradict each other or cannot apply, naming the field', () => {
    const cases: [unknown, string, RegExp][] = [
      [{ itemStatuses: [] }, 'behavior.itemStatuses', /at least one status/],
      [{ itemStatuses: [200, 99] }, 'behavior.itemStatuses[1]', /200 to 599/],
      [{ itemStatuses: [200, 600] }, 'behavior.itemStatuses[1]', /200 to 599/],
      [{ itemStatuses: [200], itemFailPercent: 5 }, 'behavior.itemFailPercent', /either itemStatuses .* or itemFailPercent/],
      [{ itemFailStatus: 500 }, 'behavior.itemFailStatus', /only applies with itemFailPercent/],
      [{ itemFailPercent: 5, itemFailStatus: 200 }, 'behavior.itemFailStatus', /300 to 599/],
      [{ itemFailPercent: 101 }, 'behavior.itemFailPercent', /100/],
      [{ batchStatus: 207 }, 'behavior.batchStatus', /only applies to a per-item answer/],
      [{ itemStatuses: [200], body: '[]' }, 'behavior.body', /writes its own body/],
      [{ itemStatuses: [200], status: 500 }, 'behavior.status', /batchStatus/],
      [{ itemStatuses: [200], hang: true }, 'behavior.itemStatuses', /never be sent/],
      [{ itemFailPercent: 5, reset: true }, 'behavior.itemFailPercent', /never be sent/],
    ];
    for (const [behavior, path, message] of cases) {
      const e = errors(mockReceiverSchema, { name: 'x', path: '/x', behavior }).find((x) => x.path === path);
      expect(e, JSON.stringify(behavior)).toBeDefined();
      expect(e!.message, JSON.stringify(behavior)).toMatch(message);
    }
    // seed is fine with itemFailPercent alone.
    expect(mockReceiverSchema.safeParse({ name: 'x', path: '/x', behavior: { itemFailPercent: 5, seed: 1 } }).success).toBe(true);
  });

  it('refuses a Standard Webhooks secret that is not whsec_ base64, saying what is expected', () => {
    for (const secret of ['', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_not base64!', 'whsec_']) {
      const e = errors(mockReceiverSchema, { name: 'x', path: '/x', standardWebhooksSecret: secret });
      expect(e.map((x) => x.path), secret).toEqual(['standardWebhooksSecret']);
      expect(e[0].message).toMatch(/whsec_/);
    }
  });

  it('refuses bad paths, an empty secret and duplicates in the list', () => {
    for (const path of ['hook', '/', '/a b', '/a?b=1', '/a#b']) {
      expect(errors(mockReceiverSchema, { name: 'x', path }).map((e) => e.path), path).toEqual(['path']);
    }
    expect(errors(mockReceiverSchema, { name: 'x', path: '/x', secret: '' }).map((e) => e.path)).toEqual(['secret']);
    const dup = errors(mockReceiversSchema, [
      { name: 'a', path: '/a' },
      { name: 'a', path: '/a' },
    ]);
    expect(dup.map((e) => e.path)).toEqual(['[1].name', '[1].path']);
  });

  it('every example entry in docs/mock-receivers.md is valid', () => {
    const md = readFileSync(new URL('../../docs/mock-receivers.md', import.meta.url), 'utf8');
    const entries: unknown[] = [];
    for (const [, block] of md.matchAll(/```json\n([\s\S]*?)```/g)) {
      if (block.includes('"mockReceivers"')) entries.push(...JSON.parse(block).mockReceivers);
      else if (block.trimStart().startsWith('{ "name"')) entries.push(...parseEntries(block));
    }
    expect(entries.length).toBeGreaterThan(10);
    for (const entry of entries) expect(mockReceiverSchema.safeParse(entry).success, JSON.stringify(entry)).toBe(true);
  });
});

/** A block holds one entry (maybe over several lines) or one entry per line. */
function parseEntries(block: string): unknown[] {
  try {
    return [JSON.parse(block)];
  } catch {
    return block.trim().split('\n').map((line) => JSON.parse(line));
  }
}
