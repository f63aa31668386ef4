import { generate } from 'selfsigned';

export interface TlsMaterial {
  key: string;
  cert: string;
}

const cache = new Map<string, Promise<TlsMaterial>>();

/**
 * A self-signed certificate for 127.0.0.1/localhost (EC P-256: fast to make). `expired` gives one
 * whose validity ended a year ago, for CERT_HAS_EXPIRED once the client trusts it. Cached per kind,
 * so a test file pays for key generation once.
 */
export function selfSignedCert(kind: 'valid' | 'expired' = 'valid'): Promise<TlsMaterial> {
  let p = cache.get(kind);
  if (!p) {
    p = make(kind);
    cache.set(kind, p);
  }
  return p;
}

async function make(kind: 'valid' | 'expired'): Promise<TlsMaterial> {
  const day = 24 * 3600 * 1000;
  const notBeforeDate = new Date(Date.now() - (kind === 'expired' ? 730 : 1) * day);
  const notAfterDate = new Date(Date.now() + (kind === 'expired' ? -365 : 365) * day);
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}
