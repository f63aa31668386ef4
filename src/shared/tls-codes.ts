// Which failed sends are TLS errors, and what each means: one table for the dispatcher (which records
// them as TLS errors, never retried) and the inspector (which explains them). OpenSSL's certificate
// verification results as Node names them, and Node's and OpenSSL's prefixes for the rest.

const TLS_TEXT: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the receiver presented a self-signed certificate, which is not trusted',
  SELF_SIGNED_CERT_IN_CHAIN: 'the certificate chain ends in a self-signed root that is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the certificate could not be verified against a trusted issuer (incomplete chain?)',
  UNABLE_TO_GET_ISSUER_CERT: 'the certificate of the issuer could not be found (incomplete chain?)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the certificate was issued by an authority that is not trusted here',
  UNABLE_TO_GET_CRL: 'the certificate revocation list could not be found',
  UNABLE_TO_DECRYPT_CERT_SIGNATURE: 'the certificate signature could not be decrypted',
  UNABLE_TO_DECRYPT_CRL_SIGNATURE: 'the revocation list signature could not be decrypted',
  UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY: 'the issuer’s public key could not be read',
  CERT_SIGNATURE_FAILURE: 'the certificate signature is invalid',
  CRL_SIGNATURE_FAILURE: 'the revocation list signature is invalid',
  CERT_NOT_YET_VALID: 'the receiver’s certificate is not valid yet (check the clock)',
  CERT_HAS_EXPIRED: 'the receiver’s certificate has expired',
  CRL_NOT_YET_VALID: 'the revocation list is not valid yet',
  CRL_HAS_EXPIRED: 'the revocation list has expired',
  ERROR_IN_CERT_NOT_BEFORE_FIELD: 'the certificate’s start date is malformed',
  ERROR_IN_CERT_NOT_AFTER_FIELD: 'the certificate’s end date is malformed',
  ERROR_IN_CRL_LAST_UPDATE_FIELD: 'the revocation list’s last-update date is malformed',
  ERROR_IN_CRL_NEXT_UPDATE_FIELD: 'the revocation list’s next-update date is malformed',
  CERT_CHAIN_TOO_LONG: 'the certificate chain is too long',
  CERT_REVOKED: 'the receiver’s certificate was revoked',
  INVALID_CA: 'a certificate in the chain is not allowed to act as an authority',
  PATH_LENGTH_EXCEEDED: 'the certificate chain is longer than its authority allows',
  INVALID_PURPOSE: 'the certificate is not for use by a server',
  CERT_UNTRUSTED: 'the certificate is not trusted',
  CERT_REJECTED: 'the certificate was rejected',
  HOSTNAME_MISMATCH: 'the certificate is not for this host name',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate is not for this host name',
  ERR_SSL_WRONG_VERSION_NUMBER: 'the receiver does not speak TLS on this port (an http server behind an https URL?)',
  EPROTO: 'the TLS handshake failed',
};

export function isTlsCode(code: string | null): boolean {
  return code !== null && (code in TLS_TEXT || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_'));
}

/** What a TLS error code means, for people; a generic sentence for one without its own. */
export function tlsCodeText(code: string): string {
  return TLS_TEXT[code] ?? 'the secure connection could not be established';
}
