import { describe, expect, it } from 'vitest';
import { failureFacts, isTlsCode as dispatcherSaysTls } from '../../src/main/engine/dispatcher/send-errors';
import { explainAttempt } from '../../src/renderer/features/inspector/explain';
import type { Attempt } from '../../src/shared/types';

// Issue 26: the dispatcher (which records an attempt as a TLS error, not retried) and the inspector
// (which explains it) read one table, so they agree on every code.
const CODES = [
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'INVALID_CA', 'HOSTNAME_MISMATCH', 'CERT_REVOKED', 'ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_SOMETHING_NEW', 'EPROTO', 'ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'ENOTFOUND', 'TIMEOUT', 'CERTAINLY_NOT_TLS', 'SSL_LIKE_BUT_NOT',
];

/** The inspector's words for a send that failed with this code, from the facts the dispatcher records for it. */
function explained(code: string): string | null {
  const facts = failureFacts({ errorCode: code, status: null, timedOut: false, tlsError: dispatcherSaysTls(code) }, 5000);
  return explainAttempt({ errorCode: code, responseStatus: null, outcome: 'failed', timedOut: false, trigger: 'scheduled', errorMessage: null, ...facts } as unknown as Attempt, {});
}

describe('TLS error codes', () => {
  it.each(CODES)('%s: the dispatcher and the inspector agree', (code) => {
    expect(explained(code)!.startsWith('TLS error')).toBe(dispatcherSaysTls(code));
  });

  it('INVALID_CA and HOSTNAME_MISMATCH are explained as TLS errors (they were explained as something else)', () => {
    for (const code of ['INVALID_CA', 'HOSTNAME_MISMATCH']) {
      expect(explained(code)).toMatch(new RegExp(`^TLS error \\(${code}\\)`));
    }
  });
});
