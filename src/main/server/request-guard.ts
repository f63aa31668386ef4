import { timingSafeEqual } from 'node:crypto';

// DNS rebinding and cross-site requests: a page on another origin must not drive the control API,
// even with the user's browser on the same machine. Only loopback Host names pass.
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function hostAllowed(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host.toLowerCase());
  if (!m) return false;
  return LOOPBACK_HOSTS.has(m[1]) && (m[2] === undefined ? port === 80 : Number(m[2]) === port);
}

export function originAllowed(origin: string | undefined, port: number): boolean {
  if (origin === undefined) return true; // not a browser cross-origin request
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' && hostAllowed(u.host, port);
  } catch {
    return false;
  }
}

export function tokenMatches(header: string | undefined, token: string): boolean {
  if (!header) return false;
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!m) return false;
  const a = Buffer.from(m[1]);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
