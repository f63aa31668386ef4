import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createTransport } from './api';
import { adoptFirstRows } from './api/early-request';
import { App } from './app';
import { ErrorBoundary } from './components/error-boundary';
import { StoreContext } from './store-context';
import { createAppStore } from './stores/app.store';
import { connectLiveEvents } from './stores/live-events';
import './styles/base.css';
import './styles/layout.css';
import './styles/screens.css';

const root = createRoot(document.getElementById('root')!);

function Fatal({ message }: { message: string }) {
  return (
    <div className="error-panel fatal" role="alert" data-testid="fatal-error">
      <h2>Webhook Lab cannot start</h2>
      <p>{message}</p>
    </div>
  );
}

try {
  const transport = createTransport();
  const store = createAppStore(transport);
  // Starting on the inspector: its first page is what the first render waits on, so ask now
  // (first-page.ts may already have), not from an effect after that render.
  if (store.getState().tab === 'inspector') void store.getState().loadCalls();
  // Rows first-page.ts painted may have been clicked already.
  adoptFirstRows((id) => store.getState().selectCall(id));
  // Live events from the next task, so opening the stream does not hold up the first render; a page
  // loaded before they flow is loaded again once they do (inspector slice, resyncCalls).
  setTimeout(() => connectLiveEvents(store, transport), 0);
  root.render(
    <StrictMode>
      <ErrorBoundary area="the app">
        <StoreContext.Provider value={store}>
          <App />
        </StoreContext.Provider>
      </ErrorBoundary>
    </StrictMode>,
  );
} catch (err) {
  root.render(<Fatal message={(err as Error).message} />);
}
