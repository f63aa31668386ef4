import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  children: ReactNode;
  /** Shown in the message so the user knows which part failed. */
  area?: string;
  /** Called by Try again before the subtree mounts again (a part loaded on demand loads again). */
  onReset?: () => void;
}

// Never a blank screen: a render error in one screen shows a readable message there and leaves
// the rest of the app usable; "Try again" re-mounts the subtree.
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
    return (
      <div className="error-panel" role="alert" data-testid="error-boundary">
        <h2>Something went wrong{this.props.area ? ` in ${this.props.area}` : ''}</h2>
        <p>{error.message || String(error)}</p>
        <p className="muted">The rest of the app still works. If this keeps happening, the browser console has the details.</p>
        <button
          type="button"
          onClick={() => {
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
