import type { ShortcutGroup } from './shortcut-group';

/**
 * The inspector's keyboard shortcuts: one list that both the key handler (features/inspector/keyboard.ts) and the help
 * overlay (shortcuts.ts, as INSPECTOR_SHORTCUT_GROUP) read, so what is listed is what
 * works. `keys` are KeyboardEvent.key values; `label` is how to show them.
 */
export type InspectorAction = 'next' | 'previous' | 'open' | 'close' | 'search' | 'pick';

export interface Shortcut {
  action: InspectorAction;
  keys: string[];
  label: string[];
  description: string;
}

export const INSPECTOR_SHORTCUTS: readonly Shortcut[] = [
  { action: 'next', keys: ['ArrowDown', 'j'], label: ['↓', 'j'], description: 'Next call (the open detail follows)' },
  { action: 'previous', keys: ['ArrowUp', 'k'], label: ['↑', 'k'], description: 'Previous call' },
  { action: 'open', keys: ['Enter'], label: ['Enter'], description: 'Open the call' },
  { action: 'close', keys: ['Escape'], label: ['Esc'], description: 'Close the call' },
  { action: 'search', keys: ['/'], label: ['/'], description: 'Search' },
  { action: 'pick', keys: ['x'], label: ['x'], description: 'Pick or unpick the call (Ctrl/⌘-click, Shift-click for a range): draft a plan from the picked calls' },
];

/** The action a key press asks for, or null (modifiers held: another shortcut's business). */
export function inspectorAction(e: { key: string; ctrlKey?: boolean; metaKey?: boolean; altKey?: boolean }): InspectorAction | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  return INSPECTOR_SHORTCUTS.find((s) => s.keys.includes(e.key))?.action ?? null;
}

/** The same list as the help overlay shows its groups. */
export const INSPECTOR_SHORTCUT_GROUP: ShortcutGroup = {
  scope: 'Inspector (outside a text field)',
  shortcuts: INSPECTOR_SHORTCUTS.map((s) => ({ keys: s.label, does: s.description })),
};
