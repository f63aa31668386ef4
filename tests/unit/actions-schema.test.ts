import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { sendsActions, sendsClassic, webhookMappings, webhookMode } from '../../src/shared/actions/mode';
import { configSchema } from '../../src/shared/config.schema';
import { webhookSettingsSchema } from '../../src/shared/source.schema';
import { describeErrors, fieldErrors } from '../../src/shared/validation-error';
// Segment's mapping-kit and FQL checks, as the engine installs them into the schema.
import '../../src/main/engine/actions/rules';

const withWebhooks = (webhooks: Record<string, unknown>) => ({ sources: [{ name: 'checkout', webhooks }] });
const mapping = (over: Record<string, unknown> = {}) => ({ name: 'orders', trigger: { type: 'track' }, url: 'https://example.com/a', ...over });
const withMappings = (mappings: unknown[], extra: Record<string, unknown> = {}) => withWebhooks({ mode: 'actions', mappings, ...extra });

function errorsOf(input: unknown): string {
  const r = configSchema.safeParse(input);
  if (r.success) throw new Error('expected the config to be refused');
  return describeErrors(fieldErrors(r.error as z.ZodError));
}
const ok = (input: unknown) => expect(configSchema.safeParse(input).error?.issues).toBeUndefined();
const W = 'sources[0].webhooks';

describe('Webhooks settings: mode and mappings', () => {
  it('a mapping gets POST, no headers and an empty trigger by default; data and batchSize stay omitted', () => {
    const w = webhookSettingsSchema.parse({ enabled: true, mode: 'both', urls: [{ url: 'https://example.com/c' }], mappings: [{ name: 'all', url: 'https://example.com/a' }] });
    expect(w.mappings).toEqual([{ name: 'all', trigger: {}, url: 'https://example.com/a', method: 'POST', headers: {} }]);
  });

  it('settings without the new fields parse unchanged and read as Classic', () => {
    const w = webhookSettingsSchema.parse({ enabled: false, urls: [] });
    expect(w).toEqual({ enabled: false, urls: [] });
    expect([webhookMode(w), webhookMappings(w), sendsClassic(w), sendsActions(w)]).toEqual(['classic', [], true, false]);
    expect([sendsClassic({ mode: 'both' }), sendsActions({ mode: 'both' }), sendsClassic({ mode: 'actions' })]).toEqual([true, true, false]);
  });

  it('accepts a full mapping', () => {
    ok(withMappings([mapping({ method: 'PATCH', headers: { 'X-Env': 'qa' }, trigger: { type: { oneOf: ['track', 'page'] }, event: { contains: 'Order' } }, data: { total: { '@path': '$.properties.total' }, t: { '@template': '{{event}}' }, n: [1, null] }, batchSize: 4000 })]));
  });

  it('refuses an unknown mode', () => {
    expect(errorsOf(withWebhooks({ mode: 'modern' }))).toBe(`${W}.mode: must be "classic", "actions" or "both"`);
  });

  it('at most 5 mappings, reported on mappings[5]', () => {
    const six = Array.from({ length: 6 }, (_, i) => mapping({ name: `m${i}` }));
    expect(errorsOf(withMappings(six))).toBe(`${W}.mappings[5]: at most 5 mappings`);
    ok(withMappings(six.slice(0, 5)));
  });

  it('names are unique, 1 to 100 characters', () => {
    expect(errorsOf(withMappings([mapping(), mapping({ url: 'https://example.com/b' })]))).toBe(`${W}.mappings[1].name: "orders" is already the name of mappings[0]`);
    expect(errorsOf(withMappings([mapping({ name: '  ' })]))).toBe(`${W}.mappings[0].name: required`);
    expect(errorsOf(withMappings([mapping({ name: 'x'.repeat(101) })]))).toBe(`${W}.mappings[0].name: at most 100 characters`);
  });

  it('url must be absolute http(s)', () => {
    expect(errorsOf(withMappings([mapping(), mapping({ name: 'b', url: 'ftp://example.com/' })]))).toBe(`${W}.mappings[1].url: must be an absolute http: or https: URL`);
    expect(errorsOf(withMappings([mapping({ url: '/relative' })]))).toBe(`${W}.mappings[0].url: must be an absolute http: or https: URL`);
  });

  it('a private URL is not a validation error (the lab still delivers there)', () => {
    ok(withMappings([mapping({ url: 'http://127.0.0.1:9001/hook' })]));
  });

  it('method is POST, PUT or PATCH', () => {
    expect(errorsOf(withMappings([mapping({ method: 'GET' })]))).toBe(`${W}.mappings[0].method: must be POST, PUT or PATCH`);
  });

  it('headers: token names, ASCII values, framing names refused, Segment\'s replaceable ones allowed', () => {
    expect(errorsOf(withMappings([mapping({ headers: { 'X-Foo': 'هيثم' } })]))).toBe(
      `${W}.mappings[0].headers.X-Foo: invalid value for header "X-Foo": Segment's Actions destination sends only ASCII header values (printable characters, space and tab)`,
    );
    // Latin-1 passes a Classic URL's headers but not an Actions mapping's.
    ok(withWebhooks({ urls: [{ url: 'https://example.com/c', headers: { 'X-Foo': 'café' } }] }));
    expect(errorsOf(withMappings([mapping({ headers: { 'X-Foo': 'café' } })]))).toContain(`${W}.mappings[0].headers.X-Foo: invalid value`);
    expect(errorsOf(withMappings([mapping({ headers: { 'X-Foo': 'a\r\nX-Evil: 1' } })]))).toContain(`${W}.mappings[0].headers.X-Foo: invalid value`);
    expect(errorsOf(withMappings([mapping({ headers: { 'X Foo': 'a' } })]))).toContain(`${W}.mappings[0].headers.X Foo: invalid header name "X Foo"`);
    // Segment's client lets a mapping replace these (the Destinations screen warns); never the framing.
    ok(withMappings([mapping({ headers: { 'X-Signature': 'a', 'User-Agent': 'mine', Accept: 'text/plain', 'Accept-Encoding': 'identity', 'Content-Type': 'text/plain' } })]));
    expect(errorsOf(withMappings([mapping({ headers: { 'Content-Length': '1' } })]))).toBe(`${W}.mappings[0].headers.Content-Length: header "Content-Length" is set by the dispatcher and cannot be replaced`);
    expect(errorsOf(withMappings([mapping({ headers: { Host: 'h' } })]))).toContain('header "Host" is set by the dispatcher');
  });

  it('trigger conditions: type among the call types, shapes checked', () => {
    expect(errorsOf(withMappings([mapping({ trigger: { type: 'trak' } })]))).toBe(`${W}.mappings[0].trigger.type: "trak" is not a call type: identify, track, page, screen, group, alias`);
    expect(errorsOf(withMappings([mapping({ trigger: { type: { oneOf: ['page', 'delete'] } } })]))).toBe(`${W}.mappings[0].trigger.type.oneOf[1]: "delete" is not a call type: identify, track, page, screen, group, alias`);
    expect(errorsOf(withMappings([mapping({ trigger: { type: { equals: 'nope' } } })]))).toContain(`${W}.mappings[0].trigger.type.equals: "nope" is not a call type`);
    expect(errorsOf(withMappings([mapping({ trigger: { event: { startsWith: 'O' } } })]))).toContain(`${W}.mappings[0].trigger.event: a condition is a string (equals)`);
    expect(errorsOf(withMappings([mapping({ trigger: { event: { oneOf: [] } } })]))).toBe(`${W}.mappings[0].trigger.event.oneOf: must list at least one value`);
    expect(errorsOf(withMappings([mapping({ trigger: { event: { contains: '' } } })]))).toBe(`${W}.mappings[0].trigger.event.contains: must be some text`);
    expect(errorsOf(withMappings([mapping({ trigger: { name: 'x' } })]))).toBe(`${W}.mappings[0].trigger.name: unknown key`);
    ok(withMappings([mapping({ trigger: { event: 'Any Name At All' } })]));
  });

  it('data directives are checked by Segment\'s mapping kit, where they are', () => {
    expect(errorsOf(withMappings([mapping({ data: { user: { email: { '@nope': 'traits.email' } } } })]))).toBe(`${W}.mappings[0].data.user.email: has an invalid directive: @nope`);
    expect(errorsOf(withMappings([mapping({ data: { a: { b: { '@path': 5 } } } })]))).toBe(`${W}.mappings[0].data.a.b.@path: should be a string or a mapping directive but it is a number`);
    expect(errorsOf(withMappings([mapping({ data: { r: { '@replace': { pattern: 'longer than ten', value: 'x' } } } })]))).toBe(`${W}.mappings[0].data.r.@replace.pattern: should be a string of length 10 or less`);
    ok(withMappings([mapping({ data: { email: { '@path': 'traits.email' }, t: { '@if': { exists: { '@path': '$.userId' }, then: 1, else: 2 } } } })]));
    ok(withMappings([mapping({ data: 'a plain string body' })])); // refused per call when sent, as Segment does
  });

  it('a trigger may be FQL text; what Segment\'s parser cannot read is refused on the trigger', () => {
    ok(withMappings([mapping({ trigger: 'type = "track" and properties.plan = "pro"' })]));
    ok(withMappings([mapping({ trigger: {} })]));
    expect(errorsOf(withMappings([mapping({ trigger: ' ' })]))).toMatch(/mappings\[0\]\.trigger: not a trigger Segment can read: empty: Segment's parser refuses an empty trigger; omit the trigger \(or give \{\}\) for every call/);
    // Segment's parser takes it (as type = "eos"): so does the lab, with a warning (issue 37).
    ok(withMappings([mapping({ trigger: 'type = ' })]));
    expect(errorsOf(withMappings([mapping({ trigger: '(type = "track"' })]))).toMatch(/mappings\[0\]\.trigger: not a trigger Segment can read/);
    expect(errorsOf(withMappings([mapping({ trigger: 'plan = "pro"' })]))).toMatch(new RegExp(`^${W.replace(/[.[\]]/g, '\\$&')}\\.mappings\\[0\\]\\.trigger: not a trigger Segment can read`));
    expect(errorsOf(withMappings([mapping({ trigger: { event: 'Say "hi"' } })]))).toBe(`${W}.mappings[0].trigger.event: cannot hold a double quote: a trigger is FQL, whose strings cannot`);
  });

  it("data nests at most 64 levels, like a call; deeper is refused on its field, at any depth, never a stack overflow", () => {
    const deep = (n: number) => JSON.parse(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`) as unknown;
    ok(withMappings([mapping({ data: deep(64) })]));
    const refused = `${W}.mappings[0].data: nested more than 64 levels deep (a mapping's data is held to a call's limit)`;
    for (const n of [65, 5_000, 200_000]) expect(errorsOf(withMappings([mapping({ data: deep(n) })]))).toBe(refused);
  });

  it('batchSize is a whole number from 1 to 4000', () => {
    expect(errorsOf(withMappings([mapping({ batchSize: 0 })]))).toBe(`${W}.mappings[0].batchSize: must be a whole number from 1 to 4000`);
    expect(errorsOf(withMappings([mapping({ batchSize: 2.5 })]))).toBe(`${W}.mappings[0].batchSize: must be a whole number from 1 to 4000`);
    expect(errorsOf(withMappings([mapping({ batchSize: 4001 })]))).toBe(`${W}.mappings[0].batchSize: at most 4000, Segment's limit; omit it to send one call per request`);
  });
});

describe('enabling Webhooks by mode', () => {
  const url = [{ url: 'https://example.com/c' }];
  it('classic needs a URL (message as before)', () => {
    expect(errorsOf(withWebhooks({ enabled: true, mappings: [mapping()] }))).toBe(`${W}.enabled: cannot enable Webhooks without a URL`);
    ok(withWebhooks({ enabled: true, urls: url }));
  });

  it('actions needs a mapping, not a URL', () => {
    expect(errorsOf(withWebhooks({ enabled: true, mode: 'actions', urls: url }))).toBe(
      `${W}.enabled: cannot enable Webhooks without a mapping: mode "actions" sends Actions requests, one per matching entry of mappings`,
    );
    ok(withWebhooks({ enabled: true, mode: 'actions', mappings: [mapping()] }));
  });

  it('both needs both, and names each', () => {
    expect(errorsOf(withWebhooks({ enabled: true, mode: 'both' }))).toBe(
      `${W}.enabled: cannot enable Webhooks without a URL: mode "both" also sends Classic requests, to urls; ${W}.enabled: cannot enable Webhooks without a mapping: mode "both" sends Actions requests, one per matching entry of mappings`,
    );
    ok(withWebhooks({ enabled: true, mode: 'both', urls: url, mappings: [mapping()] }));
  });

  it('disabled settings may be incomplete', () => {
    ok(withWebhooks({ enabled: false, mode: 'both' }));
  });
});

describe('standardWebhooksSecret', () => {
  it('accepts a whsec_ secret, and "" for none', () => {
    ok(withWebhooks({ standardWebhooksSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }));
    ok(withWebhooks({ standardWebhooksSecret: '' }));
  });

  it('says the expected shape', () => {
    expect(errorsOf(withWebhooks({ standardWebhooksSecret: 'hunter2' }))).toBe(
      `${W}.standardWebhooksSecret: must start with "whsec_": expected "whsec_" followed by standard base64 of a 1 to 64 byte key (usually 24 or 32 random bytes), e.g. whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`,
    );
    expect(errorsOf(withWebhooks({ standardWebhooksSecret: 'whsec_%%%%' }))).toContain(`${W}.standardWebhooksSecret: the part after "whsec_" is not base64`);
  });

  it('with it set, its headers cannot be set by hand on a URL or a mapping', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(errorsOf(withWebhooks({ standardWebhooksSecret: secret, mode: 'both', urls: [{ url: 'https://example.com/c', headers: { 'Webhook-Id': 'x' } }], mappings: [mapping({ headers: { 'webhook-signature': 'v1,x' } })] }))).toBe(
      `${W}.urls[0].headers.Webhook-Id: header "Webhook-Id" is set by the Standard Webhooks signature (standardWebhooksSecret) and cannot be replaced; ` +
        `${W}.mappings[0].headers.webhook-signature: header "webhook-signature" is set by the Standard Webhooks signature (standardWebhooksSecret) and cannot be replaced`,
    );
    ok(withWebhooks({ urls: [{ url: 'https://example.com/c', headers: { 'Webhook-Id': 'x' } }] }));
  });
});
