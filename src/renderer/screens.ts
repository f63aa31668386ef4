// The app's screens, declared once, in nav order. The sidebar and the command palette (app.tsx),
// the hash routes (#/inspector, ui.slice.ts) and the shell painted before the app runs
// (first-page/first-page.ts) all read this list. No React here: the first-page build inlines it.
import type { ConnectionStatus } from './api/transport.types';

export const SCREENS = [
  { tab: 'compose', label: 'Compose' },
  { tab: 'inspector', label: 'Inspector' },
  { tab: 'destinations', label: 'Destinations' },
  { tab: 'receivers', label: 'Mock receivers' },
  { tab: 'probe', label: 'Check a receiver' },
  { tab: 'plans', label: 'Tracking plans' },
  { tab: 'audiences', label: 'Audiences' },
  { tab: 'deletions', label: 'Deletions' },
  { tab: 'load', label: 'Load' },
  { tab: 'client', label: 'Client' },
  { tab: 'settings', label: 'Settings' },
] as const satisfies readonly { tab: string; label: string }[];

export type Tab = (typeof SCREENS)[number]['tab'];
export type Screen = { tab: Tab; label: string };

/** The screen an address without a known one opens on. */
export const DEFAULT_TAB: Tab = 'compose';

/** The shell around the screens: the sidebar's title, and its badge of the live-events stream. */
export const APP_NAME = 'Webhook Lab';
export const CONNECTION_LABELS: Record<ConnectionStatus, string> = { connecting: 'connecting…', open: 'live', reconnecting: 'reconnecting…', closed: 'offline' };

/** A screen's address: `#/inspector`. */
export function tabHref(tab: Tab): string {
  return `#/${tab}`;
}

/** One call's address (a permalink): `#/inspector/5006`. */
export function callHref(id: number): string {
  return `${tabHref('inspector')}/${id}`;
}

/** The call an address names (`#/inspector/5006`), or null: another screen, or no call (`#/inspector`). */
export function callIdFromHash(hash: string): number | null {
  const m = /^#\/?inspector\/(\d+)(?:[/?]|$)/.exec(hash);
  const id = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** The screen an address names (`#/inspector`, `#inspector/…`, `#/inspector?…`); the default one otherwise. */
export function tabFromHash(hash: string): Tab {
  const t = hash.replace(/^#\/?/, '').split(/[/?]/)[0];
  return SCREENS.find((s) => s.tab === t)?.tab ?? DEFAULT_TAB;
}
