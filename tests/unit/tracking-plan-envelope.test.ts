import { describe, expect, it } from 'vitest';
import { checkCall, compilePlan, withEnvelope, type Enforcement } from '../../src/main/engine/tracking-plans/check';
import { mergeUnder } from '../../src/shared/normalize';

// A batch's context is merged under each call's own before its check, as normalization does (objects
// inside merged too). A call whose own context already has every key of the batch's, at every depth,
// is checked as it is, without a copy: the verdict must be the one the merged copy gets.

const SETTINGS: Enforcement = { unplannedEvents: 'allow', unplannedProperties: 'allow', violations: 'block' };
const plan = compilePlan('p', 'plan', [
  {
    type: 'COMMON',
    version: 1,
    jsonSchema: { type: 'object', properties: { context: { type: 'object', properties: { library: { type: 'object', required: ['name'] }, ip: { type: 'string' } }, required: ['library'] } } },
  },
] as never);

describe('withEnvelope', () => {
  const envelope = { context: { library: { name: 'bench' } } };

  it('a call whose context has every key of the envelope context is the call itself', () => {
    const item = { type: 'track', event: 'e', context: { ip: '1.2.3.4', library: { name: 'sdk' } } };
    expect(withEnvelope(item, envelope)).toBe(item);
  });

  it('a call missing one of its keys gets a merged copy, its own values first', () => {
    const item = { type: 'track', event: 'e', context: { ip: '1.2.3.4' } };
    const merged = withEnvelope(item, { context: { library: { name: 'bench' }, ip: 'x' } });
    expect(merged).not.toBe(item);
    expect(merged.context).toEqual({ library: { name: 'bench' }, ip: '1.2.3.4' });
    expect(item.context).toEqual({ ip: '1.2.3.4' });
    expect(withEnvelope({ type: 'track' }, envelope).context).toEqual({ library: { name: 'bench' } });
    expect(withEnvelope({ type: 'track' }, {})).toEqual({ type: 'track' });
  });

  it('checked as it is or as a merged copy, a call gets the same verdict', () => {
    const cases = [
      { context: { ip: '1.2.3.4', library: { name: 'sdk' } } },
      { context: { ip: 5, library: {} } },
      { context: { library: { name: 'sdk' }, extra: true } },
    ];
    for (const c of cases) {
      const item = { type: 'track', event: 'e', ...c };
      const asIs = checkCall(plan, SETTINGS, withEnvelope(item, envelope));
      const copy = checkCall(plan, SETTINGS, { ...item, context: mergeUnder(envelope.context, item.context) });
      expect(asIs, JSON.stringify(c)).toEqual(copy);
    }
  });

  it("merges objects inside the context as the stored call has them: the batch's library.name with the call's library.version", () => {
    // Found by a review: the check merged only the context's own keys, so a call sending
    // library.version under a batch sending library.name was checked without the name the stored
    // (normalized) call has, and flagged "library must have name".
    const item = { type: 'track', event: 'e', context: { ip: '1.2.3.4', library: { version: '3.1.0' } } };
    const merged = withEnvelope(item, envelope);
    expect(merged).not.toBe(item);
    expect(merged.context).toEqual({ library: { name: 'bench', version: '3.1.0' }, ip: '1.2.3.4' });
    const kinds = (call: Record<string, unknown>) => checkCall(plan, SETTINGS, call).violations.map((v) => `${v.kind} ${v.path}`);
    expect(kinds(merged)).toEqual(['unplanned_event /event']);
    // What the shallow merge gave:
    expect(kinds({ ...item, context: { ...envelope.context, ...item.context } })).toContain('required_missing /context/library/name');
    // Deeper keys covered: the call itself.
    const full = { type: 'track', event: 'e', context: { library: { name: 'sdk', version: '1' } } };
    expect(withEnvelope(full, envelope)).toBe(full);
  });

  it("a context that is not an object takes the batch's, as normalization does; an envelope context that is not one is ignored", () => {
    const arrayContext = { type: 'track', event: 'e', context: ['library'] };
    expect(withEnvelope(arrayContext, { context: {} }).context).toEqual({});
    expect(withEnvelope(arrayContext, envelope).context).toEqual({ library: { name: 'bench' } });
    const item = { type: 'track', event: 'e', context: { ip: '1' } };
    expect(withEnvelope(item, { context: ['x'] as never })).toBe(item);
  });
});
