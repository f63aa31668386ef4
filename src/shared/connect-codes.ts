// Which failed sends are connection errors (no HTTP response came: the connection was never made, or
// broke before the answer's first byte), and what each means: one table for the dispatcher (which
// records them on the attempt as `connectError`) and the inspector (which explains them).

const CONNECT_TEXT: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing is listening at that host and port',
  ECONNRESET: 'the receiver closed the connection before answering',
  UND_ERR_SOCKET: 'the connection broke before an answer arrived',
  EPIPE: 'the connection closed while the request was being sent',
  ENOTFOUND: 'the host name does not resolve (DNS)',
  EAI_AGAIN: 'DNS lookup failed temporarily',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection attempt timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection attempt timed out',
};

export function isConnectCode(code: string | null): boolean {
  return code !== null && Object.hasOwn(CONNECT_TEXT, code);
}

/** What a connection error code means, for people; null for a code that is not one. */
export function connectCodeText(code: string): string | null {
  return isConnectCode(code) ? (CONNECT_TEXT[code] ?? null) : null;
}
