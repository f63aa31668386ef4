import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { configSchema } from '../../src/shared/config.schema';
import { describeErrors, fieldErrors, parseOrThrow, ValidationError } from '../../src/shared/validation-error';

// The example of SPEC §8, verbatim.
const SPEC_EXAMPLE = {
  sources: [
    {
      name: 'checkout',
      writeKey: 'wk_checkout_dev',
      webhooks: {
        enabled: true,
        sharedSecret: 's3cret',
        urls: [{ url: 'http://127.0.0.1:9001/hook', headers: { 'X-Env': 'qa' } }],
      },
    },
  ],
  settings: {
    payloadFormat: 'full',
    timeScale: 1,
    strict: false,
    userAgentProduct: 'Segment.io',
    retrySchedule: { preset: 'default' },
    retentionCalls: 200000,
  },
  mockReceivers: [{ name: 'flaky', path: '/flaky', behavior: { failFirst: 3, status: 500 } }],
};

type Webhooks = Record<string, unknown>;
const withWebhooks = (webhooks: Webhooks) => ({ sources: [{ name: 'checkout', webhooks }] });

function errorsOf(input: unknown): string {
  const r = configSchema.safeParse(input);
  if (r.success) throw new Error('expected the config to be refused');
  return describeErrors(fieldErrors(r.error as z.ZodError));
}

describe('config schema (SPEC §8)', () => {
  it('parses the SPEC example', () => {
    const config = configSchema.parse(structuredClone(SPEC_EXAMPLE));
    expect(config.sources[0].webhooks).toEqual(SPEC_EXAMPLE.sources[0].webhooks);
    expect(config.settings).toEqual(SPEC_EXAMPLE.settings);
    expect(config.mockReceivers).toHaveLength(1);
  });

  it('an empty config is valid and gets defaults', () => {
    expect(configSchema.parse({})).toEqual({ sources: [], settings: {}, mockReceivers: [], audiences: [], trackingPlans: [] });
  });

  it('refuses a sixth URL, naming it', () => {
    const urls = Array.from({ length: 6 }, (_, i) => ({ url: `http://127.0.0.1:900${i}/hook` }));
    expect(errorsOf(withWebhooks({ enabled: true, urls }))).toBe('sources[0].webhooks.urls[5]: at most 5 URLs');
    const five = urls.slice(0, 5);
    expect(configSchema.safeParse(withWebhooks({ enabled: true, urls: five })).success).toBe(true);
  });

  it('reports unknown keys with their path, at any depth', () => {
    expect(errorsOf({ ...SPEC_EXAMPLE, sourcez: [] })).toBe('sourcez: unknown key');
    expect(errorsOf(withWebhooks({ enabled: false, urls: [], sharedSecert: 'x' }))).toBe('sources[0].webhooks.sharedSecert: unknown key');
    expect(errorsOf({ settings: { payloadFormat: 'full', timescale: 2 } })).toBe('settings.timescale: unknown key');
    expect(errorsOf({ settings: { retrySchedule: { preset: 'default', jiter: 0 } } })).toBe('settings.retrySchedule.jiter: unknown key');
  });

  // Stored as three U+FFFD, such a name no longer matched itself: the same file applied twice tried to make its source again (review).
  it('refuses a lone surrogate in any name, naming it', () => {
    const lone = 'x\ud800';
    expect(errorsOf({ sources: [{ name: lone }] })).toBe('sources[0].name: has a lone surrogate (an unpaired \\uD800-\\uDFFF escape): not text');
    expect(errorsOf({ mockReceivers: [{ name: lone, path: '/a' }] })).toMatch(/^mockReceivers\[0\]\.name: has a lone surrogate/);
    expect(errorsOf({ trackingPlans: [{ name: `\udc00${lone}`, rules: [] }] })).toMatch(/^trackingPlans\[0\]\.name: has a lone surrogate/);
    expect(errorsOf(withWebhooks({ mappings: [{ name: lone, url: 'https://example.com/a' }] }))).toMatch(/^sources\[0\]\.webhooks\.mappings\[0\]\.name: has a lone surrogate/);
    // A pair is one character, not two halves.
    expect(configSchema.safeParse({ sources: [{ name: 'x\ud83d\ude00' }] }).success).toBe(true);
  });

  // `in` found what every object inherits: "constructor" was taken as a preset and jammed the dispatcher (review).
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])('refuses the preset name %s, which only an object inherits', (preset) => {
    expect(errorsOf({ settings: { retrySchedule: { preset } } })).toMatch(/^settings\.retrySchedule\.preset: unknown preset \(use custom or one of: default, /);
  });

  it.each(['Content-Type', 'content-length', 'Host', 'USER-AGENT', 'X-Signature', 'Transfer-Encoding', 'Connection'])(
    'refuses the reserved header %s, naming the entry',
    (name) => {
      const urls = [{ url: 'https://example.com/hook', headers: { [name]: 'x' } }];
      expect(errorsOf(withWebhooks({ urls }))).toBe(
        `sources[0].webhooks.urls[0].headers.${name}: header "${name}" is set by the dispatcher and cannot be replaced`,
      );
    },
  );

  it('refuses a header value or name with a newline (header injection)', () => {
    const value = [{ url: 'https://example.com/hook' }, { url: 'https://example.com/b', headers: { 'X-Env': 'qa\r\nX-Evil: 1' } }];
    expect(errorsOf(withWebhooks({ urls: value }))).toBe('sources[0].webhooks.urls[1].headers.X-Env: invalid value for header "X-Env"');
    const name = [{ url: 'https://example.com/hook', headers: { 'X-Env\n': 'qa' } }];
    expect(errorsOf(withWebhooks({ urls: name }))).toBe('sources[0].webhooks.urls[0].headers.X-Env\n: invalid header name "X-Env\n"');
  });

  it.each([
    ['http://127.0.0.1:9001/hook\r\nX-Injected: 1', 'must not contain control characters (a line break, a tab)'],
    ['http://127.0.0.1:9001/ho\tok', 'must not contain control characters (a line break, a tab)'],
    ['http://127.0.0.1:0/hook', 'port 0 cannot be connected to: give the port the receiver listens on'],
    ['http://127.0.0.1:99999/hook', 'port 99999 is out of range: give one from 1 to 65535'],
    ['https://example.com:65536', 'port 65536 is out of range: give one from 1 to 65535'],
    [' http://127.0.0.1:9001/hook', 'must not start or end with a space'],
  ])('refuses the receiver URL %j, naming why (issue 38)', (url, why) => {
    expect(errorsOf(withWebhooks({ urls: [{ url }] }))).toBe(`sources[0].webhooks.urls[0].url: ${why}`);
  });

  it.each(['ftp://example.com/hook', 'file:///etc/passwd', '/relative/hook', 'example.com/hook', 'http://'])(
    'refuses the URL %s',
    (url) => {
      expect(errorsOf(withWebhooks({ urls: [{ url }] }))).toBe('sources[0].webhooks.urls[0].url: must be an absolute http: or https: URL');
    },
  );

  it('refuses enabling Webhooks without a URL', () => {
    expect(errorsOf(withWebhooks({ enabled: true, urls: [] }))).toBe('sources[0].webhooks.enabled: cannot enable Webhooks without a URL');
    expect(errorsOf(withWebhooks({ enabled: true }))).toBe('sources[0].webhooks.enabled: cannot enable Webhooks without a URL');
    expect(configSchema.safeParse(withWebhooks({ enabled: false })).success).toBe(true);
  });

  it('refuses duplicate source names and write keys', () => {
    const dup = { sources: [{ name: 'a', writeKey: 'k' }, { name: 'a', writeKey: 'k' }] };
    expect(errorsOf(dup)).toBe('sources[1].name: duplicate source name "a"; sources[1].writeKey: duplicate write key');
  });

  it('a source may set collectorFaults (or null); a wrong field is named with its path', () => {
    const faults = { rate: 0.5, mode: 'status', status: 503, retryAfterS: 2, seed: 42 };
    expect(configSchema.parse({ sources: [{ name: 'a', collectorFaults: faults }] }).sources[0].collectorFaults).toEqual(faults);
    expect(configSchema.parse({ sources: [{ name: 'a', collectorFaults: null }] }).sources[0].collectorFaults).toBeNull();
    expect(errorsOf({ sources: [{ name: 'a', collectorFaults: { rate: 2, mode: 'hang' } }] })).toBe('sources[0].collectorFaults.rate: must be between 0 and 1');
    expect(errorsOf({ sources: [{ name: 'a', collectorFaults: { rate: 1, mode: 'delay' } }] })).toBe('sources[0].collectorFaults.delayMs: required with mode "delay"');
  });

  it('parseOrThrow raises a ValidationError carrying the same field list', () => {
    expect(() => parseOrThrow(configSchema, withWebhooks({ enabled: true }))).toThrow(ValidationError);
    let caught: unknown;
    try {
      parseOrThrow(configSchema, { settings: { payloadFormat: 'xml' } });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).fields.map((f) => f.path)).toEqual(['settings.payloadFormat']);
    expect((caught as ValidationError).status).toBe(400);
  });
});
