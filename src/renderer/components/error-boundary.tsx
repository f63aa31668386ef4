import { Component, type ErrorInfo, type ReactNode } from 'react';
import { isModuleLoadError } from './module-load-error';

interface Props {
  children: ReactNode;
  /** Shown in the message so the user knows which part failed. */
  area?: string;
  /** Called by Try again before the subtree mounts again (a part loaded on demand loads again). */
  onReset?: () => void;
}

// Never a blank screen: a render error in one screen shows a readable message there and leaves
// the rest of the app usable; "Try again" re-mounts the subtree, or reloads the page at the same
// address when the part's script could not be loaded (module-load-error.ts: nothing else fetches it again).
export class ErrorBoundary extends Component<Props, { error: Error | null }> {
  override state = { error: null as Error | null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo) {
    console.error(`[webhook-lab] ${this.props.area ?? 'UI'} crashed`, error, info.componentStack);
  }

  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    const notLoaded = isModuleLoadError(error);
    return (
      <div className="error-panel" role="alert" data-testid="error-boundary">
        <h2>Something went wrong{this.props.area ? ` in ${this.props.area}` : ''}</h2>
        <p>{error.message || String(error)}</p>
        {notLoaded ? (
          <p className="muted">The lab could not be reached for this part of the app, or it restarted with a new build. Try again reloads the page here.</p>
        ) : (
          <p className="muted">The rest of the app still works. If this keeps happening, the browser console has the details.</p>
        )}
        <button
          type="button"
          onClick={() => {
            if (notLoaded) return window.location.reload();
            this.props.onReset?.();
            this.setState({ error: null });
          }}
        >
          Try again
        </button>
      </div>
    );
  }
}
