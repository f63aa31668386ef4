import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { configSchema } from '../../src/shared/config.schema';
import { describeErrors, fieldErrors } from '../../src/shared/validation-error';
import { buildActionsRequestHeaders, buildRequestHeaders } from '../../src/shared/webhook-request';
import { actionsHeaderTwins } from '../../src/shared/actions/request';
import { MAX_RECEIVER_URL_CHARS } from '../../src/shared/limits';

// Issue 22, item 7: a receiver's or a mapping's static headers may not name a hop-by-hop header
// (they govern one connection, and the dispatcher's HTTP client refuses or mishandles them, so every
// delivery would fail), and a receiver URL is at most 2 KB.

const W = 'sources[0].webhooks';
const withWebhooks = (webhooks: Record<string, unknown>) => ({ sources: [{ name: 'checkout', webhooks }] });
const mapping = (over: Record<string, unknown> = {}) => ({ name: 'orders', url: 'https://example.com/a', ...over });

function errorsOf(input: unknown): string {
  const r = configSchema.safeParse(input);
  if (r.success) throw new Error('expected the config to be refused');
  return describeErrors(fieldErrors(r.error as z.ZodError));
}

const HOP_BY_HOP = ['Expect', 'Upgrade', 'Keep-Alive', 'Proxy-Connection', 'TE', 'Trailer', 'Trailers', 'proxy-authorization', 'Proxy-Authenticate', 'HTTP2-Settings'];

describe('hop-by-hop header names', () => {
  it.each(HOP_BY_HOP)('refuses %s in a receiver URL\'s headers, naming the field', (name) => {
    expect(errorsOf(withWebhooks({ urls: [{ url: 'https://example.com/hook', headers: { [name]: '100-continue' } }] }))).toBe(
      `${W}.urls[0].headers.${name}: header "${name}" is hop-by-hop (it governs one connection, not the request) and cannot be set`,
    );
  });

  it.each(HOP_BY_HOP)('refuses %s in an Actions mapping\'s headers, naming the field', (name) => {
    expect(errorsOf(withWebhooks({ mode: 'actions', mappings: [mapping({ headers: { [name]: 'x' } })] }))).toBe(
      `${W}.mappings[0].headers.${name}: header "${name}" is hop-by-hop (it governs one connection, not the request) and cannot be set`,
    );
  });

  it('a stored header of such a name (written before the rule) is never sent', () => {
    const body = new Uint8Array(2);
    const urlHeaders = { Expect: '100-continue', Upgrade: 'h2c', 'keep-alive': 'timeout=5', 'X-Env': 'qa' };
    const classic = buildRequestHeaders({ userAgent: 'Segment.io/1.0', signature: null, urlHeaders, body });
    expect(Object.keys(classic).map((k) => k.toLowerCase())).toEqual(['user-agent', 'content-type', 'content-length', 'x-env']);
    const actions = buildActionsRequestHeaders({ userAgent: 'Segment (Actions)', signature: null, urlHeaders, body });
    expect(Object.keys(actions)).toEqual(['user-agent', 'x-env', 'content-type', 'accept', 'content-length', 'accept-encoding']);
  });
});

describe('receiver URL length', () => {
  const long = (n: number) => {
    const base = 'https://example.com/hook?x=';
    return base + 'a'.repeat(n - base.length);
  };

  it('is 2048 characters', () => {
    expect(MAX_RECEIVER_URL_CHARS).toBe(2048);
  });

  it('accepts a URL of 2048 characters and refuses 2049, naming the field (Classic and Actions)', () => {
    expect(configSchema.safeParse(withWebhooks({ urls: [{ url: long(2048) }] })).success).toBe(true);
    expect(errorsOf(withWebhooks({ urls: [{ url: long(2049) }] }))).toBe(`${W}.urls[0].url: at most 2048 characters (2 KB); this one has 2049`);
    expect(configSchema.safeParse(withWebhooks({ mode: 'actions', mappings: [mapping({ url: long(2048) })] })).success).toBe(true);
    expect(errorsOf(withWebhooks({ mode: 'actions', mappings: [mapping({ url: long(300_000) })] }))).toBe(
      `${W}.mappings[0].url: at most 2048 characters (2 KB); this one has 300000`,
    );
  });

  it('counts the URL as sent: 1,000 "é" are 6,000 characters percent-encoded', () => {
    const typed = `https://example.com/${'é'.repeat(1000)}`;
    expect(typed.length).toBeLessThan(2048);
    expect(errorsOf(withWebhooks({ urls: [{ url: typed }] }))).toBe(`${W}.urls[0].url: at most 2048 characters (2 KB) as sent; percent-encoded, this one has 6020`);
  });
});

describe('header names given twice', () => {
  it('Classic: refused whatever their case (they would go out merged as one header)', () => {
    expect(errorsOf(withWebhooks({ urls: [{ url: 'https://example.com/hook', headers: { 'X-A': '1', 'x-a': '2' } }] }))).toBe(
      `${W}.urls[0].headers.x-a: header "x-a" is given twice (as "X-A" too): header names are case-insensitive`,
    );
  });

  it('Actions: taken, as Segment takes them (one header, both values), with a warning (issue 37)', () => {
    expect(configSchema.safeParse(withWebhooks({ enabled: true, mode: 'actions', mappings: [mapping({ headers: { 'X-Team': 'a', 'x-team': 'b' } })] })).success).toBe(true);
    expect(actionsHeaderTwins({ 'X-Team': 'a', 'x-team': 'b', Other: 'c' })).toEqual(['x-team: also given as "X-Team" (header names are case-insensitive): Segment sends one header with both values, "x-team: a, b"']);
    const headers = buildActionsRequestHeaders({ userAgent: 'Segment (Actions)', signature: null, urlHeaders: { 'X-Team': 'a', Other: 'c', 'x-team': 'b' }, body: new Uint8Array(2) });
    expect(Object.entries(headers).filter(([k]) => k === 'x-team' || k === 'other')).toEqual([['other', 'c'], ['x-team', 'a, b']]);
  });
});
