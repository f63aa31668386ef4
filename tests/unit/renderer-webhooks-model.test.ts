import { describe, expect, it } from 'vitest';
import { webhookSettingsSchema } from '../../src/shared/source.schema';
import { secretProblem } from '../../src/shared/standard-webhooks';
import type { WebhookSettings } from '../../src/shared/types';
import {
  conditionDraft,
  conditionOf,
  draftProblems,
  errorUnder,
  fromDraft,
  generateSharedSecret,
  generateSwSecret,
  mappingOf,
  mappingUrlWarning,
  newMapping,
  shownOnForm,
  toDraft,
} from '../../src/renderer/features/destinations/webhooks-model';

const classicOnly: WebhookSettings = { enabled: true, urls: [{ url: 'https://r.example/hook', headers: { 'X-Env': 'qa' } }], sharedSecret: 's3' };

const both: WebhookSettings = {
  enabled: true,
  urls: [{ url: 'https://r.example/hook', headers: {} }],
  sharedSecret: 's3',
  mode: 'both',
  mappings: [
    {
      name: 'orders',
      trigger: { type: { equals: 'track' }, event: { contains: 'Order' } },
      url: 'https://r.example/actions',
      method: 'PUT',
      headers: { 'x-team': 'growth' },
      data: { total: { '@path': '$.properties.total' } },
      batchSize: 50,
    },
    { name: 'all', trigger: {}, url: 'http://127.0.0.1:9/all', method: 'POST', headers: {} },
  ],
  standardWebhooksSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
};

describe('Webhooks form draft', () => {
  it('gives back Classic-only settings unchanged, with no Actions keys (no "unsaved changes" on open)', () => {
    expect(fromDraft(toDraft(classicOnly))).toEqual(classicOnly);
    expect(Object.keys(fromDraft(toDraft(classicOnly)))).toEqual(['enabled', 'urls', 'sharedSecret']);
  });

  it('round-trips mode, mappings and the Standard Webhooks secret', () => {
    expect(fromDraft(toDraft(both))).toEqual(both);
  });

  it('writes a bare-string condition (config file shorthand) as equals, without reading as a change', () => {
    const short: WebhookSettings = { ...both, mappings: [{ ...both.mappings![1], trigger: { type: 'track' } }] };
    expect(fromDraft(toDraft(short)).mappings![0].trigger).toEqual({ type: { equals: 'track' } });
    expect(fromDraft(toDraft(fromDraft(toDraft(short))))).toEqual(fromDraft(toDraft(short)));
  });

  it('keeps mappings in Classic mode, and clears what the form empties', () => {
    const d = toDraft(both);
    const out = fromDraft({ ...d, mode: 'classic', swSecret: '  ' });
    expect(out.mode).toBeUndefined();
    expect(out.mappings).toHaveLength(2);
    expect(out.standardWebhooksSecret).toBeUndefined();
    expect(fromDraft({ ...d, mappings: [] }).mappings).toBeUndefined();
  });

  it('writes what the schema accepts for a new mapping filled in', () => {
    const m = { ...newMapping([]), url: 'https://r.example/a' };
    const out = fromDraft({ ...toDraft(classicOnly), mode: 'both', mappings: [m] });
    expect(webhookSettingsSchema.safeParse(out).success).toBe(true);
    expect(out.mappings![0]).toEqual({ name: 'mapping 1', trigger: {}, url: 'https://r.example/a', method: 'POST', headers: {} });
  });

  it('names a new mapping after the ones there', () => {
    const first = newMapping([]);
    expect(newMapping([first]).name).toBe('mapping 2');
    expect(newMapping([{ ...first, name: 'mapping 2' }]).name).toBe('mapping 3');
  });
});

describe('trigger conditions', () => {
  it('reads every condition shape, a bare string as equals', () => {
    expect(conditionDraft(undefined)).toEqual({ op: 'any', value: '' });
    expect(conditionDraft('track')).toEqual({ op: 'equals', value: 'track' });
    expect(conditionDraft({ contains: 'Order' })).toEqual({ op: 'contains', value: 'Order' });
    expect(conditionDraft({ oneOf: ['a', 'b c'] })).toEqual({ op: 'oneOf', value: 'a, b c' });
  });

  it('writes them back; oneOf splits on commas and drops blanks', () => {
    expect(conditionOf({ op: 'any', value: 'x' })).toBeUndefined();
    expect(conditionOf({ op: 'equals', value: ' track ' })).toEqual({ equals: 'track' });
    expect(conditionOf({ op: 'contains', value: 'Ord' })).toEqual({ contains: 'Ord' });
    expect(conditionOf({ op: 'oneOf', value: 'Order Completed, Checkout Started,, ' })).toEqual({ oneOf: ['Order Completed', 'Checkout Started'] });
  });
});

describe('mapping fields', () => {
  it('blank data is the whole event (omitted); batch off leaves batchSize out, on defaults to 1,000', () => {
    const m = newMapping([]);
    expect(mappingOf(m)).not.toHaveProperty('data');
    expect(mappingOf(m)).not.toHaveProperty('batchSize');
    expect(mappingOf({ ...m, batch: true }).batchSize).toBe(1000);
    expect(mappingOf({ ...m, batch: true, batchSize: '' }).batchSize).toBe(1000);
    expect(mappingOf({ ...m, batch: true, batchSize: '4000' }).batchSize).toBe(4000);
  });

  it('holds back data that is not JSON, on its field, and lets the engine judge the rest', () => {
    const d = { ...toDraft(both) };
    d.mappings = [d.mappings[0], { ...d.mappings[1], data: '{"a": ' }];
    expect(Object.keys(draftProblems(d))).toEqual(['webhooks.mappings[1].data']);
    expect(draftProblems(d)['webhooks.mappings[1].data']).toMatch(/^not JSON: line 1, column \d+/);
    expect(draftProblems(toDraft(both))).toEqual({});
  });

  it('warns under a private mapping URL, not under a blank or half-typed one', () => {
    expect(mappingUrlWarning('http://127.0.0.1:9/all')).toMatch(/^Segment could not reach this URL from its cloud: 127\.0\.0\.1 is a loopback address/);
    expect(mappingUrlWarning('https://hooks.example.com/a')).toBeNull();
    expect(mappingUrlWarning('')).toBeNull();
    expect(mappingUrlWarning('http:/')).toBeNull();
  });
});

describe('secrets', () => {
  it('generates a whsec_ secret the shape check accepts, from the random bytes given', () => {
    const s = generateSwSecret((b) => b.fill(7));
    expect(s).toBe(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    expect(secretProblem(s)).toBeNull();
    expect(secretProblem(generateSwSecret())).toBeNull();
    expect(generateSharedSecret()).toMatch(/^[0-9a-f]{48}$/);
  });
});

describe('server errors on the form', () => {
  const fields = [
    { path: 'webhooks.mappings[0].trigger.event.oneOf[1]', message: 'must be a string' },
    { path: 'webhooks.mappings[1].url', message: 'must be an absolute http: or https: URL' },
  ];
  it('finds an error under a field that stands for a subtree, saying where', () => {
    expect(errorUnder(fields, 'webhooks.mappings[0].trigger.event')).toBe('oneOf[1]: must be a string');
    expect(errorUnder(fields, 'webhooks.mappings[1].url')).toBe('must be an absolute http: or https: URL');
    expect(errorUnder(fields, 'webhooks.mappings[1].name')).toBeUndefined();
    expect(errorUnder(fields, 'webhooks.mappings[1')).toBeUndefined();
  });

  it('lists under the form only the paths it has no input for', () => {
    for (const p of ['webhooks.mode', 'webhooks.standardWebhooksSecret', 'webhooks.mappings[2].data.total.@path', 'webhooks.mappings[0].headers.X-A', 'webhooks.urls[1].url']) {
      expect(shownOnForm(p), p).toBe(true);
    }
    for (const p of ['webhooks.bogus', 'name', 'webhooks.mappings[0].extra']) expect(shownOnForm(p), p).toBe(false);
  });
});
