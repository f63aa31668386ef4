import { describe, expect, it } from 'vitest';
import { INSPECTOR_SHORTCUTS, inspectorAction } from '../../src/renderer/inspector-shortcuts';

describe('inspector shortcuts: the listed keys are the handled keys', () => {
  it('maps each listed key to its action', () => {
    expect(['ArrowDown', 'j', 'ArrowUp', 'k', 'Enter', 'Escape', '/', 'x'].map((key) => inspectorAction({ key }))).toEqual([
      'next', 'next', 'previous', 'previous', 'open', 'close', 'search', 'pick',
    ]);
  });
  it('leaves other keys and any key with Ctrl, Cmd or Alt alone', () => {
    expect(inspectorAction({ key: 'q' })).toBeNull();
    expect(inspectorAction({ key: 'x', ctrlKey: true })).toBeNull();
    expect(inspectorAction({ key: 'k', ctrlKey: true })).toBeNull();
    expect(inspectorAction({ key: 'j', metaKey: true })).toBeNull();
    expect(inspectorAction({ key: '/', altKey: true })).toBeNull();
  });
  it('every entry has a label per key and a description, for the help overlay', () => {
    for (const s of INSPECTOR_SHORTCUTS) {
      expect(s.label).toHaveLength(s.keys.length);
      expect(s.description.length).toBeGreaterThan(3);
    }
  });
});
