// The part of the theme the build needs (electron.vite.config.ts imports it; no React, no DOM at
// import time): the stored key, the choices, and the script that applies the stored choice to <html>
// before the first paint. See theme.ts.

export const THEME_KEY = 'webhook-lab.theme';
export const THEME_CHOICES = ['system', 'light', 'dark'] as const;
export type ThemeChoice = (typeof THEME_CHOICES)[number];

/**
 * Runs inline in <head> before anything paints; the build inlines its source text with its
 * arguments, so it must use nothing from outside its body.
 */
export function bootTheme(key: string, choices: readonly string[]): void {
  try {
    const v = localStorage.getItem(key);
    if (v && v !== 'system' && choices.includes(v)) document.documentElement.setAttribute('data-theme', v);
  } catch {
    // Storage refused (privacy mode): the system's scheme, as by default.
  }
}

/** The inline script's text (the build hashes it into the page's script-src). */
export function themeBootScript(): string {
  return `(${bootTheme.toString()})(${JSON.stringify(THEME_KEY)}, ${JSON.stringify(THEME_CHOICES)});`;
}

