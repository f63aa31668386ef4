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

// OpenSSL certificate verification results as Node names them, plus Node's and OpenSSL's prefixes.
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE', 'UNABLE_TO_DECRYPT_CRL_SIGNATURE', 'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE', 'CRL_SIGNATURE_FAILURE', 'CERT_NOT_YET_VALID', 'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID', 'CRL_HAS_EXPIRED', 'ERROR_IN_CERT_NOT_BEFORE_FIELD', 'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD', 'ERROR_IN_CRL_NEXT_UPDATE_FIELD', 'CERT_CHAIN_TOO_LONG', 'CERT_REVOKED',
  'INVALID_CA', 'PATH_LENGTH_EXCEEDED', 'INVALID_PURPOSE', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'HOSTNAME_MISMATCH',
  'EPROTO',
]);

export function isTlsCode(code: string | null): boolean {
  return code !== null && (TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_'));
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
