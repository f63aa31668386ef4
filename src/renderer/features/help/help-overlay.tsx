import { useEffect, useRef } from 'react';
import { SHORTCUT_GROUPS } from '../../shortcuts';
import { useAppStore } from '../../store-context';

/** `?`: every keyboard shortcut, by where it works (src/renderer/shortcuts.ts). */
export function HelpOverlay() {
  const store = useAppStore();
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => close.current?.focus(), []);
  return (
    <div className="overlay-backdrop" data-testid="help-backdrop" onMouseDown={(e) => e.target === e.currentTarget && store.getState().setOverlay(null)}>
      <div className="help-overlay" role="dialog" aria-modal="true" aria-labelledby="help-title" data-testid="help-overlay">
        <header className="row">
          <h2 id="help-title" className="grow">
            Keyboard shortcuts
          </h2>
          <button ref={close} type="button" className="small" data-testid="help-close" onClick={() => store.getState().setOverlay(null)}>
            Close
          </button>
        </header>
        {SHORTCUT_GROUPS.map((g) => (
          <section key={g.scope} data-testid="help-group" data-scope={g.scope}>
            <h4>{g.scope}</h4>
            <table className="shortcuts">
              <tbody>
                {g.shortcuts.map((s) => (
                  <tr key={s.does} data-testid="help-shortcut">
                    <td className="keys">
                      {s.keys.map((k, i) => (
                        <span key={k}>
                          {i > 0 ? <span className="muted"> or </span> : null}
                          <kbd>{k}</kbd>
                        </span>
                      ))}
                    </td>
                    <td>{s.does}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        ))}
      </div>
    </div>
  );
}
