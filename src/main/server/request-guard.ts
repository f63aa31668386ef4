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

// Percent-encodings a router decodes into something that changes which route matches: unreserved
// characters (`%61pi` is `api`), `/`, `\` and NUL. Anything else encoded (`%20`, `%C3%A9`) names
// the same resource to every reader, so it may pass.
const ROUTE_CHANGING_ESCAPE = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[DdEeFf]|5[CcFf]|7[Ee]|00)/;

/**
 * Why this request target is not the plain origin-form path it routes as, or null when it is.
 * The token check is decided on the matched route; refusing every target the router would
 * normalize means no spelling of a path can reach a route the guard did not see.
 */
export function nonCanonicalTarget(target: string): string | null {
  if (!target.startsWith('/')) return 'the request target must be a path starting with "/" (no absolute-form URL)';
  const end = target.search(/[?#]/);
  const path = end === -1 ? target : target.slice(0, end);
  if (path.includes('//')) return 'empty path segment ("//")';
  if (path.includes('\\')) return 'backslash in the path';
  if (/\/\.\.?(?:\/|$)/.test(path)) return 'dot segment ("/./" or "/../") in the path';
  if (ROUTE_CHANGING_ESCAPE.test(path)) return 'percent-encoded letter, digit, "/", "\\" or NUL in the path';
  return null;
}
