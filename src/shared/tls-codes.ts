// Which failed sends are TLS errors, and what each means: one table for the dispatcher (which records
// them as TLS errors, never retried, with their kind) and the inspector (which explains them). OpenSSL's certificate
// verification results as Node names them, and Node's and OpenSSL's prefixes for the rest.

/**
 * What kind of certificate or handshake problem a TLS error is (an attempt's `tlsError.kind`):
 * self_signed, expired, not_yet_valid, hostname_mismatch, untrusted_ca (an issuer not trusted here or
 * an incomplete chain), revoked, not_tls (no TLS on that port), other.
 */
import type { TlsErrorKind } from './call-detail.output';
export type { TlsErrorKind };

const TLS_CODES: Record<string, { kind: TlsErrorKind; text: string }> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: { kind: 'self_signed', text: 'the receiver presented a self-signed certificate, which is not trusted' },
  SELF_SIGNED_CERT_IN_CHAIN: { kind: 'self_signed', text: 'the certificate chain ends in a self-signed root that is not trusted' },
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { kind: 'untrusted_ca', text: 'the certificate could not be verified against a trusted issuer (incomplete chain?)' },
  UNABLE_TO_GET_ISSUER_CERT: { kind: 'untrusted_ca', text: 'the certificate of the issuer could not be found (incomplete chain?)' },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: { kind: 'untrusted_ca', text: 'the certificate was issued by an authority that is not trusted here' },
  UNABLE_TO_GET_CRL: { kind: 'other', text: 'the certificate revocation list could not be found' },
  UNABLE_TO_DECRYPT_CERT_SIGNATURE: { kind: 'other', text: 'the certificate signature could not be decrypted' },
  UNABLE_TO_DECRYPT_CRL_SIGNATURE: { kind: 'other', text: 'the revocation list signature could not be decrypted' },
  UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY: { kind: 'other', text: 'the issuer’s public key could not be read' },
  CERT_SIGNATURE_FAILURE: { kind: 'other', text: 'the certificate signature is invalid' },
  CRL_SIGNATURE_FAILURE: { kind: 'other', text: 'the revocation list signature is invalid' },
  CERT_NOT_YET_VALID: { kind: 'not_yet_valid', text: 'the receiver’s certificate is not valid yet (check the clock)' },
  CERT_HAS_EXPIRED: { kind: 'expired', text: 'the receiver’s certificate has expired' },
  CRL_NOT_YET_VALID: { kind: 'other', text: 'the revocation list is not valid yet' },
  CRL_HAS_EXPIRED: { kind: 'other', text: 'the revocation list has expired' },
  ERROR_IN_CERT_NOT_BEFORE_FIELD: { kind: 'other', text: 'the certificate’s start date is malformed' },
  ERROR_IN_CERT_NOT_AFTER_FIELD: { kind: 'other', text: 'the certificate’s end date is malformed' },
  ERROR_IN_CRL_LAST_UPDATE_FIELD: { kind: 'other', text: 'the revocation list’s last-update date is malformed' },
  ERROR_IN_CRL_NEXT_UPDATE_FIELD: { kind: 'other', text: 'the revocation list’s next-update date is malformed' },
  CERT_CHAIN_TOO_LONG: { kind: 'untrusted_ca', text: 'the certificate chain is too long' },
  CERT_REVOKED: { kind: 'revoked', text: 'the receiver’s certificate was revoked' },
  INVALID_CA: { kind: 'untrusted_ca', text: 'a certificate in the chain is not allowed to act as an authority' },
  PATH_LENGTH_EXCEEDED: { kind: 'untrusted_ca', text: 'the certificate chain is longer than its authority allows' },
  INVALID_PURPOSE: { kind: 'other', text: 'the certificate is not for use by a server' },
  CERT_UNTRUSTED: { kind: 'untrusted_ca', text: 'the certificate is not trusted' },
  CERT_REJECTED: { kind: 'untrusted_ca', text: 'the certificate was rejected' },
  HOSTNAME_MISMATCH: { kind: 'hostname_mismatch', text: 'the certificate is not for this host name' },
  ERR_TLS_CERT_ALTNAME_INVALID: { kind: 'hostname_mismatch', text: 'the certificate is not for this host name' },
  ERR_SSL_WRONG_VERSION_NUMBER: { kind: 'not_tls', text: 'the receiver does not speak TLS on this port (an http server behind an https URL?)' },
  EPROTO: { kind: 'other', text: 'the TLS handshake failed' },
};

export function isTlsCode(code: string | null): boolean {
  return code !== null && (Object.hasOwn(TLS_CODES, code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_'));
}

/** A TLS error code's kind; null for a code that is not a TLS error. */
export function tlsKind(code: string | null): TlsErrorKind | null {
  if (!isTlsCode(code)) return null;
  return (Object.hasOwn(TLS_CODES, code as string) ? TLS_CODES[code as string]?.kind : undefined) ?? 'other';
}

/** What a TLS error code means, for people; a generic sentence for one without its own. */
export function tlsCodeText(code: string): string {
  return (Object.hasOwn(TLS_CODES, code) ? TLS_CODES[code]?.text : undefined) ?? 'the secure connection could not be established';
}
