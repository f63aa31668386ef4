import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { callHref, callIdFromHash, tabFromHash } from '../../src/renderer/screens';
import { createUnsavedSlice, type UnsavedSlice } from '../../src/renderer/stores/unsaved.slice';
import type { AppState } from '../../src/renderer/stores/app.types';

// Issue 26: a call's address (#/inspector/<id>) and the one unsaved-changes guard. The screens'
// use of them is in tests/e2e/navigation.spec.ts.

describe("a call's address", () => {
  it('names the call, and the inspector as its screen', () => {
    expect(callHref(5006)).toBe('#/inspector/5006');
    expect(callIdFromHash('#/inspector/5006')).toBe(5006);
    expect(callIdFromHash('#inspector/7')).toBe(7);
    expect(callIdFromHash('#/inspector/7?x=1')).toBe(7);
    expect(tabFromHash('#/inspector/5006')).toBe('inspector');
  });

  it('is no call for another screen, no id, or an id that is not a positive integer', () => {
    for (const hash of ['', '#/inspector', '#/inspector/', '#/compose/5', '#/inspector/0', '#/inspector/-3', '#/inspector/5x', '#/inspector/1e3', '#/inspector/99999999999999999999']) {
      expect(callIdFromHash(hash), hash).toBeNull();
    }
  });
});

describe('the unsaved-changes guard', () => {
  // The slice alone: it reads and writes only its own keys.
  const make = () => createStore<UnsavedSlice>()((set, get, api) => createUnsavedSlice(set, get as () => AppState, api as never));

  it('goes on at once when nothing is unsaved', () => {
    const s = make();
    let went = 0;
    s.getState().guardLeave(() => went++);
    expect(went).toBe(1);
    expect(s.getState().leaving).toBeNull();
  });

  it('asks while something is unsaved: Keep editing stays and keeps the edit, Discard forgets it and goes on', () => {
    const s = make();
    let went = 0;
    s.getState().setUnsaved('webhooks', 'the Webhooks settings of shop');
    s.getState().guardLeave(() => went++);
    expect(went).toBe(0);
    expect(s.getState().leaving?.what).toEqual(['the Webhooks settings of shop']);
    s.getState().answerLeave(false);
    expect(went).toBe(0);
    expect(s.getState().leaving).toBeNull();
    expect(s.getState().unsaved).toEqual({ webhooks: 'the Webhooks settings of shop' });

    s.getState().guardLeave(() => went++);
    s.getState().answerLeave(true);
    expect(went).toBe(1);
    expect(s.getState().unsaved).toEqual({});
  });

  it('forgets an entry set back to null (saved, or its form closed)', () => {
    const s = make();
    s.getState().setUnsaved('a', 'x');
    s.getState().setUnsaved('b', 'y');
    s.getState().setUnsaved('a', null);
    expect(s.getState().unsaved).toEqual({ b: 'y' });
    let went = false;
    s.getState().setUnsaved('b', null);
    s.getState().guardLeave(() => (went = true));
    expect(went).toBe(true);
  });
});
