import { describe, expect, it } from 'vitest';
import { behaviorSummary, draftFromReceiver, draftToInput, emptyDraft } from '../../src/renderer/features/receivers/receiver-model';

describe('receiver form: the behaviours of a receiver under test', () => {
  it('round-trips enforceSignature, rejectDuplicates and knownTypes, and leaves them out when unset', () => {
    const draft = { ...emptyDraft(0), secret: 's', enforceSignature: true, rejectDuplicates: true, knownTypes: ' identify, track ,, page ' };
    const { input, errors } = draftToInput(draft);
    expect(errors).toEqual({});
    expect(input.behavior).toEqual({ enforceSignature: true, rejectDuplicates: true, knownTypes: ['identify', 'track', 'page'] });
    const back = draftFromReceiver({ id: 'r', name: input.name, path: input.path, secret: 's', tls: false, behavior: input.behavior! });
    expect(back).toMatchObject({ enforceSignature: true, rejectDuplicates: true, knownTypes: 'identify, track, page' });
    expect(draftToInput(emptyDraft(0)).input.behavior).toEqual({});
  });

  it('says so in the list', () => {
    expect(behaviorSummary({ enforceSignature: true, knownTypes: ['track'], rejectDuplicates: true })).toBe('200, 401 to a bad signature, 400 to types but track, 409 to a duplicate');
  });
});
