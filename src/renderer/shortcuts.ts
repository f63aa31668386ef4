import { INSPECTOR_SHORTCUT_GROUP } from './inspector-shortcuts';
import type { ShortcutGroup } from './shortcut-group';

// Every keyboard shortcut of the app, for the help overlay (`?`) and docs/ui.md. A screen with its
// own keys adds a group here, as the inspector does (inspector-shortcuts.ts).

export type { Shortcut, ShortcutGroup } from './shortcut-group';

export const GLOBAL_SHORTCUTS: ShortcutGroup = {
  scope: 'Anywhere',
  shortcuts: [
    { keys: ['Ctrl+K', '⌘K'], does: 'Open the command palette: every screen and common action' },
    { keys: ['?'], does: 'Show these shortcuts (outside a text field)' },
    { keys: ['Esc'], does: 'Close the palette or this help' },
  ],
};

export const PALETTE_SHORTCUTS: ShortcutGroup = {
  scope: 'Command palette',
  shortcuts: [
    { keys: ['↑', '↓'], does: 'Move through the matches' },
    { keys: ['Enter'], does: 'Run the highlighted command' },
  ],
};

export const SHORTCUT_GROUPS: ShortcutGroup[] = [GLOBAL_SHORTCUTS, PALETTE_SHORTCUTS, INSPECTOR_SHORTCUT_GROUP];

/** Whether a key event comes from a place that takes text (a `?` typed there is text, not a shortcut). */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || typeof el.closest !== 'function') return false;
  return Boolean(el.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"], .cm-editor'));
}
