import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface CertificatePair {
  cert: string;
  key: string;
  /** SHA-256 fingerprint, colon-separated hex, for users who pin or compare it. */
  fingerprint: string;
  /** True when this call generated the pair (first use, or the stored one was unusable). */
  created: boolean;
}

export const CERT_FILE = 'cert.pem';
export const KEY_FILE = 'key.pem';
const VALID_DAYS = 825;
const DAY_MS = 86_400_000;

/**
 * The HTTPS listener's certificate: reused from `dataDir` when present and still valid, so users
 * who chose to trust it keep trusting it across restarts; generated otherwise.
 */
export async function loadOrCreateCertificate(dataDir: string, now: number = Date.now()): Promise<CertificatePair> {
  const certPath = join(dataDir, CERT_FILE);
  const keyPath = join(dataDir, KEY_FILE);
  const stored = await readPair(certPath, keyPath);
  if (stored) {
    const fingerprint = usableFingerprint(stored.cert, stored.key, now);
    if (fingerprint) return { ...stored, fingerprint, created: false };
  }
  // Loaded only to make one (once per data folder): selfsigned and its X.509 stack are a tenth of a start's module loading.
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: 'Webhook Lab mock receiver' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(now - DAY_MS),
    notAfterDate: new Date(now + VALID_DAYS * DAY_MS),
    extensions: [
      // A leaf, not a CA: default clients then fail with DEPTH_ZERO_SELF_SIGNED_CERT, as a real
      // receiver with a self-signed certificate makes them fail.
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Key first and each via rename, so a crash never leaves a cert whose key is missing or partial.
  await writeAtomic(keyPath, pems.private, 0o600);
  await writeAtomic(certPath, pems.cert, 0o644);
  return { cert: pems.cert, key: pems.private, fingerprint: new X509Certificate(pems.cert).fingerprint256, created: true };
}

async function readPair(certPath: string, keyPath: string): Promise<{ cert: string; key: string } | null> {
  try {
    return { cert: await readFile(certPath, 'utf8'), key: await readFile(keyPath, 'utf8') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function usableFingerprint(cert: string, key: string, now: number): string | null {
  try {
    const x509 = new X509Certificate(cert);
    if (Date.parse(x509.validTo) - now < DAY_MS) return null;
    if (!x509.checkPrivateKey(createPrivateKey(key))) return null;
    return x509.fingerprint256;
  } catch {
    return null; // unreadable PEM: replace it rather than fail to start
  }
}

async function writeAtomic(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode });
  await rename(tmp, path);
}
