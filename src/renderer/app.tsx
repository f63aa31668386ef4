import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { ErrorBoundary } from './components/error-boundary';
import { InspectorOrExport } from './features/inspector/opened-export-view';

// The Inspector is in the first bundle; every other screen (Compose brings CodeMirror) loads when
// first opened, so the inspector's first page is not waiting on code it does not use.
const ComposeScreen = lazy(() => import('./features/compose/compose-screen').then((m) => ({ default: m.ComposeScreen })));
const DestinationsScreen = lazy(() => import('./features/destinations/destinations-screen').then((m) => ({ default: m.DestinationsScreen })));
const ReceiversScreen = lazy(() => import('./features/receivers/receivers-screen').then((m) => ({ default: m.ReceiversScreen })));
const PlansScreen = lazy(() => import('./features/tracking-plans/plans-screen').then((m) => ({ default: m.PlansScreen })));
const ProbeScreen = lazy(() => import('./features/probe/probe-screen').then((m) => ({ default: m.ProbeScreen })));
const AudiencesScreen = lazy(() => import('./features/audiences/audiences-screen').then((m) => ({ default: m.AudiencesScreen })));
const DeletionsScreen = lazy(() => import('./features/deletions/deletions-screen').then((m) => ({ default: m.DeletionsScreen })));
const LoadScreen = lazy(() => import('./features/load/load-screen').then((m) => ({ default: m.LoadScreen })));
const ClientScreen = lazy(() => import('./features/client/client-screen').then((m) => ({ default: m.ClientScreen })));
const SettingsScreen = lazy(() => import('./features/settings/settings-screen').then((m) => ({ default: m.SettingsScreen })));
import { useApp, useAppStore } from './store-context';
import { APP_NAME, CONNECTION_LABELS, SCREENS, tabHref, type Tab } from './screens';
import { LeaveDialog } from './components/leave-dialog';
import { FirstRun } from './features/demo/first-run';
import { CommandPalette } from './features/palette/command-palette';
import { HelpOverlay } from './features/help/help-overlay';
import { isTyping } from './shortcuts';
import { TimeWarpIndicator } from './components/time-warp';

// What each screen of SCREENS (screens.ts: nav order, labels, routes) shows; a screen without a
// view here does not compile.
const VIEWS: Record<Tab, () => ReactNode> = {
  compose: () => <ComposeScreen />,
  inspector: () => <InspectorOrExport />,
  destinations: () => <DestinationsScreen />,
  receivers: () => <ReceiversScreen />,
  probe: () => <ProbeScreen />,
  plans: () => <PlansScreen />,
  audiences: () => <AudiencesScreen />,
  deletions: () => <DeletionsScreen />,
  load: () => <LoadScreen />,
  client: () => <ClientScreen />,
  settings: () => <SettingsScreen />,
};

const MAC = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

/** The app-wide keys (src/renderer/shortcuts.ts): Ctrl/Cmd+K the palette, `?` the help, Esc closes either. */
function useGlobalKeys() {
  const store = useAppStore();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const s = store.getState();
      // The unsaved-changes question is answered first (LeaveDialog).
      if (s.leaving) return;
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        s.setOverlay(s.overlay === 'palette' ? null : 'palette');
      } else if (e.key === 'Escape' && s.overlay) {
        e.preventDefault();
        s.setOverlay(null);
      } else if (e.key === '?' && !e.ctrlKey && !e.metaKey && !e.altKey && !s.overlay && !isTyping(e.target)) {
        e.preventDefault();
        s.setOverlay('help');
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [store]);
}

function Overlays() {
  const overlay = useApp((s) => s.overlay);
  if (overlay === 'palette') return <CommandPalette nav={SCREENS} />;
  if (overlay === 'help') return <HelpOverlay />;
  return null;
}

function Toasts() {
  const toasts = useApp((s) => s.toasts);
  const store = useAppStore();
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} className={`toast toast-${t.kind}`} data-testid={`toast-${t.kind}`} onClick={() => store.getState().dismiss(t.id)}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

/** Storage is failing (a full disk, a read-only folder): what the lab does meanwhile, and what to do. */
function StorageBanner() {
  const storage = useApp((s) => s.storage);
  const dataDir = useApp((s) => s.health?.dataDir ?? null);
  if (!storage || storage.ok) return null;
  return (
    <div className="banner banner-error" role="alert" data-testid="storage-banner">
      <strong>The lab cannot store anything right now.</strong> {storage.message ? storage.message[0].toUpperCase() + storage.message.slice(1) : ''}
      {storage.since ? ` (since ${new Date(storage.since).toLocaleTimeString()})` : ''}. Free some space on the disk holding{' '}
      {dataDir ? <code>{dataDir}</code> : 'the data folder'}, or make it writable: the lab checks every second and resumes by itself.
    </div>
  );
}

function ConnectionBadge() {
  const status = useApp((s) => s.connection);
  return (
    <span className={`conn conn-${status}`} data-testid="connection" title="Live updates from the engine">
      {CONNECTION_LABELS[status]}
    </span>
  );
}

export function App() {
  const store = useAppStore();
  const tab = useApp((s) => s.tab);
  useEffect(() => {
    const sync = () => store.getState().followHash(location.hash);
    window.addEventListener('hashchange', sync);
    // A nav link of the shell first-page.ts painted may have been followed before this ran.
    sync();
    // The shell's own data in a task of its own: run here, these requests (and loading the API
    // contract they need) would delay the first screen's rows by the length of this effect.
    let unwatch: (() => void) | null = null;
    const timer = setTimeout(() => {
      const s = store.getState();
      void s.loadSources();
      void s.loadSettings();
      void s.loadHealth();
      void s.loadClient();
      void s.loadDeletions();
      void s.loadDemo();
      unwatch = s.watchSimulation();
    }, 0);
    return () => {
      clearTimeout(timer);
      unwatch?.();
      window.removeEventListener('hashchange', sync);
    };
  }, [store]);
  useGlobalKeys();
  const current = SCREENS.find((n) => n.tab === tab) ?? SCREENS[0];
  return (
    <div className="app">
      <nav className="sidebar">
        <div className="brand">{APP_NAME}</div>
        {SCREENS.map((n) => (
          <a key={n.tab} href={tabHref(n.tab)} className={n.tab === tab ? 'active' : ''} data-testid={`nav-${n.tab}`} aria-current={n.tab === tab ? 'page' : undefined}>
            {n.label}
          </a>
        ))}
        <span className="spacer" />
        <TimeWarpIndicator />
        <button type="button" className="small sidebar-tool" data-testid="open-palette" title="Command palette" onClick={() => store.getState().setOverlay('palette')}>
          Commands <kbd>{MAC ? '⌘K' : 'Ctrl K'}</kbd>
        </button>
        <button type="button" className="small sidebar-tool" data-testid="open-help" title="Keyboard shortcuts" onClick={() => store.getState().setOverlay('help')}>
          Shortcuts <kbd>?</kbd>
        </button>
        <ConnectionBadge />
      </nav>
      <main className="content">
        <StorageBanner />
        <FirstRun />
        <ErrorBoundary area={current.label} key={current.tab}>
          <Suspense fallback={<div className="muted">Loading…</div>}>{VIEWS[current.tab]()}</Suspense>
        </ErrorBoundary>
      </main>
      <Overlays />
      <LeaveDialog />
      <Toasts />
    </div>
  );
}
