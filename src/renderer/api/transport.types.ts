import type { ApiClient } from '../../shared/api.contract';

export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** An ApiClient plus what the shell shows about the live-event connection. */
export interface Transport extends ApiClient {
  readonly kind: 'http' | 'ipc';
  /** Live-event connection state; `open` after a reconnect means events may have been missed. */
  onStatus(listener: (status: ConnectionStatus) => void): () => void;
}
