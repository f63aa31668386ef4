// A group of keyboard shortcuts as the help overlay lists it (shortcuts.ts), apart from the lists,
// so that a screen's own list (inspector-shortcuts.ts) can name it without importing the help.

export interface Shortcut {
  /** Alternatives, each shown as one key chip: ['Ctrl+K', '⌘K']. */
  keys: string[];
  does: string;
}

export interface ShortcutGroup {
  /** Where the keys work. */
  scope: string;
  shortcuts: Shortcut[];
}
