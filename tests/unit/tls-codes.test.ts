import { describe, expect, it } from 'vitest';
import { isTlsCode as dispatcherSaysTls } from '../../src/main/engine/dispatcher/send-errors';
import { explainAttempt, isTlsError as inspectorSaysTls } from '../../src/renderer/features/inspector/explain';
import type { Attempt } from '../../src/shared/types';

// Issue 26: the dispatcher (which records an attempt as a TLS error, not retried) and the inspector
// (which explains it) read one table, so they agree on every code.
const CODES = [
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'INVALID_CA', 'HOSTNAME_MISMATCH', 'CERT_REVOKED', 'ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_SOMETHING_NEW', 'EPROTO', 'ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'ENOTFOUND', 'TIMEOUT', 'CERTAINLY_NOT_TLS', 'SSL_LIKE_BUT_NOT',
];

describe('TLS error codes', () => {
  it.each(CODES)('%s: the dispatcher and the inspector agree', (code) => {
    expect(inspectorSaysTls(code)).toBe(dispatcherSaysTls(code));
  });

  it('INVALID_CA and HOSTNAME_MISMATCH are explained as TLS errors (they were explained as something else)', () => {
    for (const code of ['INVALID_CA', 'HOSTNAME_MISMATCH']) {
      const text = explainAttempt({ errorCode: code, responseStatus: null, outcome: 'failed', timedOut: false, trigger: 'scheduled', errorMessage: null } as unknown as Attempt, {});
      expect(text).toMatch(new RegExp(`^TLS error \\(${code}\\)`));
    }
  });
});
