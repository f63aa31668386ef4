import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startControlServer } from '../../src/main/server/control-server';
import { matchesFilters } from '../../src/renderer/stores/inspector-merge';
import type { CallSummary, Page, Source } from '../../src/shared/types';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import { until } from '../helpers/until';

// Search over the control API (`q`, `body`), checked against what the inspector does with the same
// calls when they arrive live: the summaries of the engine's calls.stored events, through the
// renderer's merge predicate. A call shown live under a search must be listed on reload, and back.

const TOKEN = 'search-test-token';
let te: TestEngine;
let server: { app: FastifyInstance; url: string };
let agent: Agent;
let source: Source;

async function get<T>(path: string): Promise<{ status: number; body: T }> {
  const res = await request(server.url + path, { headers: { authorization: `Bearer ${TOKEN}` }, dispatcher: agent });
  const text = await res.body.text();
  return { status: res.statusCode, body: (text ? JSON.parse(text) : null) as T };
}

async function search(q: string, extra: Record<string, string> = {}): Promise<string[]> {
  const res = await get<Page<CallSummary>>(`/api/messages?${new URLSearchParams({ q, sourceId: source.id, limit: '500', ...extra })}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items.map((c) => c.messageId!);
}

const calls = [
  { type: 'track', userId: 'User_42', event: 'Signed Up', messageId: 's-1', properties: { email: 'Alice@Example.com' } },
  { type: 'group', userId: 'u-2', groupId: 'Acme_Corp', messageId: 's-2', traits: { plan: 'Enterprise' } },
  { type: 'alias', userId: 'u-3', previousId: 'Old_Anon', messageId: 's-3' },
  { type: 'page', anonymousId: 'ANON-Visitor', name: 'Pricing', messageId: 's-4' },
];

beforeAll(async () => {
  te = await startTestEngine();
  server = await startControlServer({ engine: te.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  agent = new Agent();
  source = await te.call('createSource', { name: 'search', webhooks: { enabled: false, sharedSecret: '', urls: [] } });
  // One single call, the rest in one batch: body search looks inside each call's own item.
  expect((await te.post('/v1/track', calls[0], { writeKey: source.writeKey })).status).toBe(200);
  expect((await te.post('/v1/batch', { batch: calls.slice(1) }, { writeKey: source.writeKey })).status).toBe(200);
});

afterAll(async () => {
  await agent?.close();
  await server?.app.close();
  await te?.stop();
});

describe('search over the control API', () => {
  it('lists exactly the calls the live merge shows for the same search', async () => {
    const live = await until(() => {
      const stored = te.events.flatMap((e) => (e.type === 'calls.stored' ? e.calls : [])).filter((c) => c.sourceId === source.id);
      expect(stored).toHaveLength(calls.length);
      return stored;
    });
    for (const q of ['user', 'USER_42', 'acme', 'corp', 'old_anon', 'anon', 'visitor', 'pricing', 's-', 'S-3', 'nope', 'signed up', 'alice']) {
      const shownLive = live.filter((c) => matchesFilters(c, { q })).map((c) => c.messageId).sort();
      expect((await search(q)).sort(), `q=${q}`).toEqual(shownLive);
    }
    expect(await search('user')).toEqual(['s-1']);
    expect(await search('  ACME ')).toEqual(['s-2']);
    expect(await search('old_')).toEqual(['s-3']);
  });

  it('body=1 also matches keys and text values inside each call’s own JSON; body=0 does not', async () => {
    expect(await search('alice@example', { body: '1' })).toEqual(['s-1']);
    expect(await search('alice@example', { body: 'true' })).toEqual(['s-1']);
    expect(await search('alice@example', { body: '0' })).toEqual([]);
    expect(await search('alice@example')).toEqual([]);
    // Batch neighbours share a request body but not a match.
    expect(await search('enterprise', { body: '1' })).toEqual(['s-2']);
    expect(await search('traits', { body: '1' })).toEqual(['s-2']);
    // Field matches still count with bodies on.
    expect((await search('s-', { body: '1' })).sort()).toEqual(['s-1', 's-2', 's-3', 's-4']);
    expect((await get('/api/messages?q=x&body=maybe')).status).toBe(400);
  });

  it('the export takes the same search', async () => {
    const res = await get<{ content: string }>(`/api/export?${new URLSearchParams({ format: 'jsonl', q: 'enterprise', body: '1', sourceId: source.id })}`);
    expect(res.status).toBe(200);
    const lines = res.body.content.trim().split('\n').map((l) => JSON.parse(l) as { call: { messageId: string } });
    expect(lines.map((l) => l.call.messageId)).toEqual(['s-2']);
  });
});
