import type { Attempt } from '../../../shared/types';
import { isConnectCode } from '../../../shared/connect-codes';
import { tlsKind } from '../../../shared/tls-codes';
import type { SendResult } from './send-result';

// What a failed send is called in an attempt record: a stable code and a sentence for people, with
// certificate problems told apart (the inspector flags them as TLS errors, not as the receiver's).

// The dispatch path reports socket/TLS errors as they are; undici wrappers (fetch, some connect
// paths) put them in `cause`, so a specific cause code beats a generic undici one.
export function errorCode(err: Error & { code?: unknown; cause?: unknown }): string {
  const own = typeof err.code === 'string' ? err.code : null;
  const cause = err.cause as { code?: unknown } | undefined;
  const inner = cause && typeof cause.code === 'string' ? cause.code : null;
  if (inner && (!own || own.startsWith('UND_ERR_'))) return inner;
  return own ?? err.name ?? 'ERROR';
}

// Which codes are TLS errors: the one table (src/shared/tls-codes.ts), shared with the inspector.
export { isTlsCode } from '../../../shared/tls-codes';

/**
 * The facts an attempt records about how it failed (issue 27), so nothing reads them back out of its
 * message: the limit it ran into, a TLS error's code and kind, a connection error's code. Which codes
 * are which is the shared tables' word (src/shared/tls-codes.ts, src/shared/connect-codes.ts).
 */
export function failureFacts(
  r: Pick<SendResult, 'status' | 'errorCode' | 'timedOut' | 'tlsError'>,
  timeoutMs: number,
): Pick<Attempt, 'timeoutMs' | 'tlsError' | 'connectError'> {
  const code = r.errorCode;
  const tls = r.tlsError && code !== null ? { code, kind: tlsKind(code) ?? 'other' } : null;
  const connect = !r.timedOut && tls === null && r.status === null && isConnectCode(code) ? { code: code as string } : null;
  return { timeoutMs: r.timedOut ? timeoutMs : null, tlsError: tls, connectError: connect };
}

const MESSAGES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  UND_ERR_SOCKET: 'socket closed by the receiver before the response was complete',
  EPIPE: 'connection closed while sending (broken pipe)',
  ENOTFOUND: 'DNS: host not found',
  EAI_AGAIN: 'DNS: temporary lookup failure',
  ETIMEDOUT: 'connect timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

export function describeError(code: string, err: Error & { reason?: unknown; hostname?: unknown }, tls: boolean): string {
  if (tls) {
    // OpenSSL errors carry a short `reason`; their message is a raw error-stack line.
    const what = typeof err.reason === 'string' ? err.reason : err.message;
    return `TLS: ${what} (${code})`;
  }
  const known = MESSAGES[code];
  if (known === undefined) return err.message || code;
  return typeof err.hostname === 'string' ? `${known} (${err.hostname})` : known;
}
