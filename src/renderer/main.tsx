import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createTransport } from './api';
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
  connectLiveEvents(store, transport);
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
