import { describe, expect, it } from 'vitest';
import type { CallDetail } from '../../src/shared/types';
import { countLines, MAX_EXPORT_BYTES, MAX_EXPORT_LINES, MAX_LISTED_PROBLEMS, parseExport, summaryOfDetail } from '../../src/renderer/stores/opened-export-model';
import { createAppStore } from '../../src/renderer/stores/app.store';
import { FakeApi } from './renderer-sim-fake-api';

// Re-opening a JSON Lines export (issue 26): the file is read line by line in the renderer; a bad
// line is reported with its number and the rest are shown.

function detail(id: number, patch: Partial<CallDetail> = {}): CallDetail {
  return {
    call: {
      id,
      sourceId: 's1',
      sourceName: 'shop',
      receivedAt: '2026-01-01T00:00:00.000Z',
      type: 'track',
      userId: 'u1',
      anonymousId: null,
      label: `Event ${id}`,
      messageId: `m${id}`,
      status: 'accepted',
      dropReason: null,
      raw: { type: 'track', event: `Event ${id}` },
      request: { path: '/v1/track', contentType: 'application/json', userAgent: null, writeKeyFrom: 'basic', batchIndex: null, batchSize: null },
      normalized: null,
    },
    urls: [{ url: 'http://127.0.0.1:9/hook', state: 'delivered', lastStatus: 200 }],
    deliveries: [],
    violations: null,
    planCheck: null,
    forwarding: { forwarded: true },
    ...patch,
  } as CallDetail;
}

const line = (d: unknown) => JSON.stringify(d);

describe('parseExport', () => {
  it('keeps good lines, reports a bad JSON line and a line that is not a call detail by number, reads CRLF and skips the empty last line', () => {
    const text = [line(detail(1)), '{"call": {"id": 2,', line({ hello: 'world' }), line(detail(4)), '[1,2]', line(detail(6)), ''].join('\r\n');
    const r = parseExport(text);
    expect(r.calls.map((d) => d.call.id)).toEqual([1, 4, 6]);
    expect(r.problems.map((p) => p.line)).toEqual([2, 3, 5]);
    expect(r.problems[0].message).toMatch(/^not JSON: /);
    expect(r.problems[1].message).toBe('not a call\'s detail: no "call" object');
    expect(r.problems[2].message).toBe("not a call's detail: a JSON array, not a call's detail object");
    expect(r.moreProblems).toBe(0);
    // The CR is not part of the JSON text: the last call's line parsed (it ends with "}\r").
    expect(r.calls[2].call.label).toBe('Event 6');
  });

  it('names the field a near-detail lacks, and reports a call id seen on an earlier line', () => {
    const noRequest = detail(3);
    delete (noRequest.call as Partial<CallDetail['call']>).request;
    const badDelivery = detail(5, { deliveries: [{ id: 9, attempts: [], urls: [] } as unknown as CallDetail['deliveries'][number]] });
    const r = parseExport([line(detail(1)), line(detail(1)), line(noRequest), line({ ...detail(4), urls: null }), line(badDelivery)].join('\n'));
    expect(r.calls.map((d) => d.call.id)).toEqual([1]);
    expect(r.problems).toEqual([
      { line: 2, message: 'call #1 is already on line 1' },
      { line: 3, message: 'not a call\'s detail: no "call.request" object' },
      { line: 4, message: 'not a call\'s detail: "urls" is not an array' },
      { line: 5, message: 'not a call\'s detail: "deliveries[0].body" is not a string' },
    ]);
  });

  it('fills the fields an older export lacks, skips blank lines in the middle and counts problems past the listed ones', () => {
    const old = detail(7) as Partial<CallDetail>;
    delete old.violations;
    delete old.planCheck;
    const r = parseExport(`${line(old)}\n\n   \n${'x\n'.repeat(MAX_LISTED_PROBLEMS + 3)}`);
    expect(r.calls[0].violations).toBeNull();
    expect(r.calls[0].planCheck).toBeNull();
    expect(r.problems).toHaveLength(MAX_LISTED_PROBLEMS);
    expect(r.problems[0].line).toBe(4);
    expect(r.moreProblems).toBe(3);
  });
});

describe('countLines', () => {
  it('counts lines with or without a final newline, stopping past the limit', () => {
    expect(countLines('')).toBe(0);
    expect(countLines('a')).toBe(1);
    expect(countLines('a\nb\n')).toBe(2);
    expect(countLines('a\r\nb')).toBe(2);
    expect(countLines('\n'.repeat(MAX_EXPORT_LINES + 50))).toBe(MAX_EXPORT_LINES + 1);
  });
});

describe('summaryOfDetail', () => {
  const delivery = (id: number, kind: 'classic' | 'actions', state: CallDetail['deliveries'][number]['state'], attemptCount: number) =>
    ({ id, kind, state, attemptCount, nextAttemptAt: state === 'retrying' ? '2026-01-01T00:05:00.000Z' : null, attempts: [{ durationMs: 12 }], urls: [], body: '{}' }) as unknown as CallDetail['deliveries'][number];

  it("reads a Classic delivery's state and attempts, or an Actions-only call's combined", () => {
    const classic = summaryOfDetail(detail(1, { deliveries: [delivery(10, 'classic', 'delivered', 2), delivery(11, 'actions', 'failed', 1)] }));
    expect(classic).toMatchObject({ id: 1, label: 'Event 1', deliveryState: 'delivered', deliveryId: 10, attemptCount: 2, latencyMs: 12, nextAttemptAt: null });
    const actions = summaryOfDetail(detail(2, { deliveries: [delivery(20, 'actions', 'delivered', 1), delivery(21, 'actions', 'retrying', 3)] }));
    expect(actions).toMatchObject({ deliveryState: 'retrying', deliveryId: 20, attemptCount: 4, nextAttemptAt: '2026-01-01T00:05:00.000Z' });
    const none = summaryOfDetail(detail(3, { violations: [{} as never, {} as never] }));
    expect(none).toMatchObject({ deliveryState: null, deliveryId: null, attemptCount: 0, violations: 2 });
    const dropped = summaryOfDetail(detail(4, { call: { ...detail(4).call, status: 'dropped', dropReason: 'invalid' } }));
    expect(dropped.deliveryState).toBe('dropped');
  });
});

describe('openExport (store)', () => {
  it('opens a file newest first, refuses one over 50 MB and an empty one with an error toast, and Back closes it', async () => {
    const store = createAppStore(new FakeApi());
    await store.getState().openExport(new File([`${line(detail(1))}\nnot json\n${line(detail(2))}\n`], 'calls.jsonl'));
    const opened = store.getState().openedExport!;
    expect(opened.fileName).toBe('calls.jsonl');
    expect(opened.calls.map((d) => d.call.id)).toEqual([2, 1]);
    expect(opened.problems.map((p) => p.line)).toEqual([2]);
    expect(store.getState().readOnly).toBeNull();
    store.getState().closeExport();
    expect(store.getState().openedExport).toBeNull();

    await store.getState().openExport(new File([new Uint8Array(MAX_EXPORT_BYTES + 1)], 'huge.jsonl'));
    expect(store.getState().openedExport).toBeNull();
    expect(store.getState().toasts.at(-1)).toMatchObject({ kind: 'error', text: expect.stringMatching(/^huge\.jsonl is 50\.0 MB: the lab opens exports of up to 50 MB/) });
    await store.getState().openExport(new File(['\n'.repeat(MAX_EXPORT_LINES + 1)], 'many.jsonl'));
    expect(store.getState().toasts.at(-1)?.text).toMatch(/^many\.jsonl has more than 100,000 lines/);
    await store.getState().openExport(new File(['\r\n'], 'empty.jsonl'));
    expect(store.getState().toasts.at(-1)?.text).toBe('empty.jsonl is empty: an export has one call per line.');
    expect(store.getState().openedExport).toBeNull();
  });
});
