import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/main/engine/store/store';
import { matchesFilters, mergeCallEvents } from '../../src/renderer/stores/inspector-merge';
import type { CallSummary } from '../../src/shared/types';
import { bodyMatches, bodyMayMatch, searchTerm, searchText } from '../../src/shared/search-filter';
import type { NewCall } from '../../src/main/engine/store/calls.repo';

// The search rule is one rule: the ids the database returns for a term are exactly the calls the
// renderer's live merge keeps for it, over the same rows (the merge sees summaries, which is what
// live events carry). Before, a call with userId User_42 matched "user" live and not on reload.

let dir: string;
let store: Store;

const items: Record<string, unknown>[] = [
  { type: 'track', userId: 'User_42', event: 'Order Completed', messageId: 'm-1', properties: { email: 'Alice@Example.com' } },
  { type: 'identify', anonymousId: 'ANON-7f', messageId: 'M-2', traits: { plan: 'Pro' } },
  { type: 'group', userId: 'u-3', groupId: 'Acme_Corp', messageId: 'm-3', traits: { industry: 'Widgets' } },
  { type: 'alias', userId: 'u-4', previousId: 'Old_Anon_9', messageId: 'm-4' },
  { type: 'page', userId: 'u-5', name: 'Pricing Page', messageId: 'm-5', properties: { path: '/pricing', note: 'quote \\ and "Ünïcode" ÉMILE' } },
  { type: 'screen', userId: 'émile', name: 'Home', messageId: 'm-6' },
  { type: 'track', userId: 'u-7', event: '100%_done', messageId: 'm-7', properties: { revenue: 42 } },
];
const terms = ['user', 'USER_42', 'user_4', 'anon', 'acme', 'corp', 'old_anon', 'm-', 'M-2', 'pricing', 'émile', 'ÉMILE', 'ünïcode', '100%', '%', '_', 'e', 'nothing-here', '  order completed ', 'email', 'pro', 'widgets', 'quote \\', '42'];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wl-search-'));
  store = new Store({ dataDir: dir });
  // Two batches: the second holds a backslash (an escape), which the body search's text test treats apart.
  const batch = (part: unknown[]) => store.requests.insert(1, { path: '/v1/batch', contentType: 'application/json', userAgent: null, writeKeyFrom: 'basic', batchSize: part.length }, JSON.stringify({ batch: part }));
  const requestIds = [batch(items.slice(0, 4)), batch(items.slice(4))];
  items.forEach((it, i) => {
    const str = (k: string) => (typeof it[k] === 'string' ? (it[k] as string) : null);
    const call: NewCall = {
      sourceId: null, receivedAt: 1000 + i, type: it.type as string, userId: str('userId'), anonymousId: str('anonymousId'),
      label: str('event') ?? str('name'), messageId: str('messageId'), groupId: str('groupId'), previousId: str('previousId'),
      status: 'accepted', dropReason: null, requestId: requestIds[i < 4 ? 0 : 1], batchIndex: i < 4 ? i : i - 4, timestamp: null, normalized: null,
    };
    store.calls.insert(call);
  });
});
afterAll(() => {
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sql = (q: string, body?: boolean) => store.calls.list({ q, body, limit: 500 }).items.map((c) => c.id);

describe('search: the database and the live merge apply one rule', () => {
  it('matches a substring of any searched field in any case, the same calls in SQL and in the merge', () => {
    const all = store.calls.list({ limit: 500 }).items;
    expect(all).toHaveLength(items.length);
    for (const q of terms) {
      const live = all.filter((c) => matchesFilters(c, { q })).map((c) => c.id);
      expect(sql(q), `q=${JSON.stringify(q)}`).toEqual(live);
    }
    // What users expect, spelled out: "user" finds User_42, and group/alias ids are searched.
    const label = (q: string) => sql(q).map((id) => all.find((c) => c.id === id)!.messageId);
    expect(label('user')).toEqual(['m-1']);
    expect(label('acme')).toEqual(['m-3']);
    expect(label('OLD_anon')).toEqual(['m-4']);
    expect(label('ÉMILE')).toEqual(['m-6']);
    expect(label('%')).toEqual(['m-7']);
    expect(label('email')).toEqual([]);
  });

  it('with bodies: keys and text values of the call’s own item, and the merge defers what it cannot see to the engine', () => {
    const all = store.calls.list({ limit: 500 }).items;
    for (const q of terms) {
      const term = searchTerm(q)!;
      const expected = all.filter((c) => matchesFilters(c, { q }) === true || bodyMatches(store.calls.get(c.id)!.raw, term)).map((c) => c.id);
      expect(sql(q, true), `q=${JSON.stringify(q)} body`).toEqual(expected);
      // The merge never claims a call the engine would not list, and never drops one it would.
      for (const c of all) {
        const live = matchesFilters(c, { q, body: true });
        if (live !== null) expect(live, `${q} ${c.messageId}`).toBe(expected.includes(c.id));
      }
    }
    const byMessage = (q: string) => sql(q, true).map((id) => all.find((c) => c.id === id)!.messageId);
    expect(byMessage('alice@example')).toEqual(['m-1']);
    expect(byMessage('ünïcode')).toEqual(['m-5']);
    // Only its own item: the batch's other calls do not match through a shared body.
    expect(byMessage('widgets')).toEqual(['m-3']);
    // Numbers are not searched in bodies.
    expect(byMessage('42')).toEqual(['m-1']);
  });

  it('the body pre-test on the text never misses a body the exact test matches, escapes included', () => {
    const cases: [unknown, string][] = [
      [{ a: 'Café' }, 'café'],
      [{ a: 'Caf\u00e9' }, 'café'],
      [{ 'Key Name': 1 }, 'key name'],
      [{ p: 'https://x.example/a' }, '//x.example'],
    ];
    for (const [item, q] of cases) {
      const term = searchTerm(q)!;
      expect(bodyMatches(item, term)).toBe(true);
      expect(bodyMayMatch(JSON.stringify(item), term)).toBe(true);
      // As an escaping sender writes it (non-ASCII and slashes escaped).
      const escaped = JSON.stringify(item).replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).replace(/\//g, '\\/');
      expect(bodyMayMatch(escaped, term)).toBe(true);
    }
    expect(searchText({ userId: 'A', label: null, groupId: 'B' })).toBe('a\nb');
    expect(searchTerm('   ')).toBeNull();
  });
});

describe('the live merge under a body search', () => {
  const summary = (id: number, userId: string): CallSummary => ({
    id, receivedAt: new Date(1_700_000_000_000 + id).toISOString(), sourceId: 's', sourceName: 's', type: 'track', userId, anonymousId: null,
    label: 'E', messageId: `m${id}`, groupId: null, previousId: null, status: 'accepted', dropReason: null, deliveryState: null,
    deliveryId: null, attemptCount: 0, nextAttemptAt: null, latencyMs: null, urls: [],
  });
  const state = (filters: { q: string; body?: boolean }) => ({ items: [summary(5, 'x')], total: 1, next: null, filters });

  it('places a new call its fields match, leaves one only its body may match to the engine, and keeps listed calls', () => {
    const byFields = mergeCallEvents(state({ q: 'alice', body: true }), [summary(6, 'Alice')], []);
    expect(byFields.items.map((c) => c.id)).toEqual([6, 5]);
    expect(byFields.undecided).toBe(false);
    const byBody = mergeCallEvents(state({ q: 'alice', body: true }), [summary(7, 'bob')], []);
    expect(byBody.items.map((c) => c.id)).toEqual([5]);
    expect(byBody.undecided).toBe(true);
    // Without bodies the same call is simply not shown, and nothing is asked.
    const fieldsOnly = mergeCallEvents(state({ q: 'alice' }), [summary(7, 'bob')], []);
    expect(fieldsOnly).toMatchObject({ items: [expect.objectContaining({ id: 5 })], undecided: false });
    // Call 5 was listed by the engine for its body: an update (delivery state) keeps it.
    const updated = mergeCallEvents(state({ q: 'alice', body: true }), [], [{ ...summary(5, 'x'), attemptCount: 1 }]);
    expect(updated.items.map((c) => c.attemptCount)).toEqual([1]);
  });
});
