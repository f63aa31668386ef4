import { useSyncExternalStore } from 'react';
import { THEME_CHOICES, THEME_KEY, type ThemeChoice } from './theme-boot';

export { THEME_CHOICES, THEME_KEY, type ThemeChoice };
export type Scheme = 'light' | 'dark';

// Theme: light, dark or follow the system (the default), chosen in Settings and remembered in
// localStorage (the desktop window runs this same renderer, so it remembers it too). The choice is
// the `data-theme` attribute of <html>; base.css gives every colour with light-dark(), so without
// the attribute the system's preference decides. The attribute is set before the first paint by
// an inline script the build makes from bootTheme (theme-boot.ts, inlined by
// electron.vite.config.ts), so a reload never flashes the other theme.

export const THEME_LABELS: Record<ThemeChoice, string> = { system: 'Follow the system', light: 'Light', dark: 'Dark' };

/** Anything stored that is not a known choice (absent, old, tampered) means the default. */
export function parseThemeChoice(value: unknown): ThemeChoice {
  return (THEME_CHOICES as readonly unknown[]).includes(value) ? (value as ThemeChoice) : 'system';
}

export function resolveScheme(choice: ThemeChoice, systemDark: boolean): Scheme {
  return choice === 'system' ? (systemDark ? 'dark' : 'light') : choice;
}

/** What "Toggle theme" picks: the scheme opposite to the one on screen, as an explicit choice. */
export function toggledChoice(choice: ThemeChoice, systemDark: boolean): ThemeChoice {
  return resolveScheme(choice, systemDark) === 'dark' ? 'light' : 'dark';
}

function storage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

export function readThemeChoice(store: Pick<Storage, 'getItem'> | null = storage()): ThemeChoice {
  try {
    return parseThemeChoice(store?.getItem(THEME_KEY));
  } catch {
    return 'system';
  }
}

const listeners = new Set<() => void>();
let current: ThemeChoice = readThemeChoice();

/** Applies and remembers a choice; every useTheme() re-renders. */
export function setThemeChoice(choice: ThemeChoice): void {
  current = choice;
  try {
    storage()?.setItem(THEME_KEY, choice);
  } catch {
    // Not remembered, still applied.
  }
  if (typeof document !== 'undefined') {
    if (choice === 'system') document.documentElement.removeAttribute('data-theme');
    else document.documentElement.setAttribute('data-theme', choice);
  }
  for (const l of listeners) l();
}

export function getThemeChoice(): ThemeChoice {
  return current;
}

const darkQuery = () => (typeof matchMedia === 'undefined' ? null : matchMedia('(prefers-color-scheme: dark)'));
export const systemPrefersDark = () => darkQuery()?.matches ?? false;

function subscribe(l: () => void): () => void {
  listeners.add(l);
  const mq = darkQuery();
  mq?.addEventListener('change', l);
  return () => {
    listeners.delete(l);
    mq?.removeEventListener('change', l);
  };
}

/** The choice and the scheme it comes to now (the system's, for `system`). */
export function useTheme(): { choice: ThemeChoice; scheme: Scheme } {
  const choice = useSyncExternalStore(subscribe, getThemeChoice);
  const dark = useSyncExternalStore(subscribe, systemPrefersDark);
  return { choice, scheme: resolveScheme(choice, dark) };
}
