// A part of the app loaded on demand (a screen, the call detail) whose script could not be fetched:
// the connection failed, or the lab restarted on a new build whose scripts have other names.
// Chromium (so the desktop window too) keeps a failed dynamic import for the page's life: importing
// the same script again fails at once without a request. Only a reload fetches it again, which is
// also what Vite documents for `vite:preloadError`.

const MESSAGES = [
  'Failed to fetch dynamically imported module', // Chromium
  'error loading dynamically imported module', // Firefox
  'Importing a module script failed', // Safari
  'Unable to preload CSS', // Vite's preload helper
];

/** Whether a render error is a script of the app that could not be loaded (not a bug in it). */
export function isModuleLoadError(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return MESSAGES.some((m) => message.includes(m));
}
