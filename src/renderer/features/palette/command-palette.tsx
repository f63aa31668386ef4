import { useEffect, useMemo, useRef, useState } from 'react';
import type { AppStore } from '../../stores/app.store';
import { tabHref, type Screen, type Tab } from '../../screens';
import { useApp, useAppStore } from '../../store-context';
import { getThemeChoice, setThemeChoice, systemPrefersDark, toggledChoice } from '../../theme';
import { filterCommands, moveHighlight, type PaletteCommand } from './palette-model';
import { detailStart, focusWhenThere, screenStart } from '../../screen-focus';

interface Command extends PaletteCommand {
  run(store: AppStore): void | Promise<void>;
}

/** To a screen, focus on its start (its heading, the inspector's current row) unless `then` names another place. */
const go = (tab: Tab, then: () => HTMLElement | null = () => screenStart(tab)) => {
  location.hash = tabHref(tab);
  focusWhenThere(then);
};
const byTestId = (testId: string) => () => document.querySelector<HTMLElement>(`[data-testid="${testId}"]`);

function commands(nav: readonly Screen[], hasDemo: boolean): Command[] {
  return [
    ...nav.map((n): Command => ({ id: `go-${n.tab}`, title: n.label, group: 'Go to', keywords: n.tab, run: () => go(n.tab) })),
    {
      id: 'new-source',
      title: 'New source',
      group: 'Action',
      keywords: 'create source write key destinations',
      run: () => {
        go('destinations', byTestId('new-source-name'));
      },
    },
    {
      id: 'send-test-call',
      title: 'Send a test call',
      group: 'Action',
      keywords: 'sample track webhook',
      run: async (store) => {
        const s = store.getState();
        const source = s.sources.find((x) => x.id === s.selectedSourceId) ?? s.sources[0];
        if (!source) {
          s.notify('No source yet: create one (New source) or try the demo', 'error');
          return;
        }
        const detail = await s.sendTestCall(source.id);
        if (!detail) return;
        store.getState().openCallInInspector(detail.call.id);
        focusWhenThere(detailStart(detail.call.id));
      },
    },
    {
      id: 'clear-filters',
      title: 'Clear inspector filters',
      group: 'Action',
      keywords: 'reset search status',
      run: (store) => {
        store.getState().clearInspectorFilters();
        go('inspector');
      },
    },
    {
      id: 'toggle-theme',
      title: 'Toggle theme (light / dark)',
      group: 'Action',
      keywords: 'dark mode light mode appearance colour color',
      run: () => setThemeChoice(toggledChoice(getThemeChoice(), systemPrefersDark())),
    },
    { id: 'theme-system', title: 'Theme: follow the system', group: 'Action', keywords: 'dark light auto appearance', run: () => setThemeChoice('system') },
    {
      id: hasDemo ? 'remove-demo' : 'try-demo',
      title: hasDemo ? 'Remove demo' : 'Try the demo',
      group: 'Action',
      keywords: 'first run sample example mock receiver',
      run: (store) => (hasDemo ? store.getState().removeDemo() : store.getState().tryDemo()),
    },
    { id: 'open-help', title: 'Keyboard shortcuts', group: 'Help', keywords: 'help keys ?', hint: '?', run: (store) => store.getState().setOverlay('help') },
  ];
}

/** Ctrl/Cmd+K: every screen and the common actions, fuzzy-filtered, run with Enter. */
export function CommandPalette({ nav }: { nav: readonly Screen[] }) {
  const store = useAppStore();
  const hasDemo = useApp((s) => s.demo !== null);
  const [query, setQuery] = useState('');
  const [index, setIndex] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const all = useMemo(() => commands(nav, hasDemo), [nav, hasDemo]);
  const matches = useMemo(() => filterCommands(all, query), [all, query]);
  const highlighted = matches[Math.min(index, matches.length - 1)];
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    input.current?.focus();
    return () => {
      // Closed with nothing moving focus (Esc, a click outside, an action that stays): back where it
      // was, not the page's body. A command that navigates focuses its screen (go) after this.
      const now = document.activeElement;
      if (before?.isConnected && (!now || now === document.body || dialog.current?.contains(now))) before.focus();
    };
  }, []);

  const run = (c: Command | undefined) => {
    if (!c) return;
    store.getState().setOverlay(c.id === 'open-help' ? 'help' : null);
    void c.run(store);
  };

  return (
    <div className="overlay-backdrop" data-testid="palette-backdrop" onMouseDown={(e) => e.target === e.currentTarget && store.getState().setOverlay(null)}>
      <div ref={dialog} className="palette" role="dialog" aria-modal="true" aria-label="Command palette" data-testid="palette">
        <input
          ref={input}
          className="palette-input"
          data-testid="palette-input"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={highlighted ? `palette-${highlighted.id}` : undefined}
          placeholder="Type a screen or an action…"
          value={query}
          spellCheck={false}
          onChange={(e) => {
            setQuery(e.target.value);
            setIndex(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              e.preventDefault();
              setIndex(moveHighlight(Math.min(index, matches.length - 1), e.key === 'ArrowDown' ? 1 : -1, matches.length));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              run(highlighted);
            }
          }}
        />
        <ul className="palette-list" id="palette-list" role="listbox" aria-label="Commands">
          {matches.map((c) => (
            <li
              key={c.id}
              id={`palette-${c.id}`}
              role="option"
              aria-selected={c === highlighted}
              className={c === highlighted ? 'active' : ''}
              data-testid="palette-item"
              data-id={c.id}
              onMouseMove={() => setIndex(matches.indexOf(c))}
              onClick={() => run(c)}
            >
              <span className="grow ellipsis">{c.title}</span>
              {c.hint ? <kbd>{c.hint}</kbd> : null}
              <span className="muted small-text">{c.group}</span>
            </li>
          ))}
          {matches.length === 0 ? (
            <li className="muted palette-none" data-testid="palette-empty">
              Nothing matches “{query}”
            </li>
          ) : null}
        </ul>
      </div>
    </div>
  );
}
