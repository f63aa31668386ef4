/**
 * The inspector's keyboard shortcuts: one list that both the key handler (keyboard.ts) and the help
 * overlay read, so what is listed is what works. `keys` are KeyboardEvent.key values; `label` is how
 * to show them.
 */
export type InspectorAction = 'next' | 'previous' | 'open' | 'close' | 'search';

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
];

/** The action a key press asks for, or null (modifiers held: another shortcut's business). */
export function inspectorAction(e: { key: string; ctrlKey?: boolean; metaKey?: boolean; altKey?: boolean }): InspectorAction | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  return INSPECTOR_SHORTCUTS.find((s) => s.keys.includes(e.key))?.action ?? null;
}
