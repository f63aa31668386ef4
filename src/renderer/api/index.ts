import '../../shared/bridge';
import { takeEarlyRequest } from './early-request';
import { createHttpTransport } from './http-transport';
import { createIpcTransport } from './ipc-transport';
import { takeToken } from './token';
import type { Transport } from './transport.types';

export type { Transport, ConnectionStatus } from './transport.types';

export class MissingTokenError extends Error {
  constructor() {
    super(
      'No access token. Open the "ui:" address that `webhook-lab serve` printed (it ends in ?token=…), ' +
        'or restart the server with --token and add ?token=<token> to this page address.',
    );
    this.name = 'MissingTokenError';
  }
}

/** IPC inside the desktop app (the preload defines window.webhookLab), HTTP in a browser. */
export function createTransport(): Transport {
  if (window.webhookLab) return createIpcTransport(window.webhookLab);
  const token = takeToken();
  if (!token) throw new MissingTokenError();
  return createHttpTransport({ token, early: takeEarlyRequest() });
}
