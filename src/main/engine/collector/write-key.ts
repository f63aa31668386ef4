/** Where the write key came from, for the inspector: Basic auth (user name) or the body's writeKey. */
export interface WriteKeyFound {
  key: string;
  from: 'basic' | 'body';
}

/**
 * Keys read from Authorization headers lately: a client sends the same header with every call, and
 * decoding it (two regular expressions and a base64 decode) was a measurable part of a single call's
 * time. Bounded: at most BASIC_KEYS_MAX headers of at most BASIC_HEADER_MAX characters, emptied when full.
 */
const basicKeys = new Map<string, string | null>();
const BASIC_KEYS_MAX = 256;
const BASIC_HEADER_MAX = 512;

/**
 * SPEC §3: HTTP Basic with the key as user name (colon and empty password optional), or `writeKey`
 * in the body. A Bearer header is ignored in favour of the body key (as the real service does).
 */
export function findWriteKey(authorization: string | undefined, body: Record<string, unknown>): WriteKeyFound | null {
  if (authorization) {
    let key = basicKeys.get(authorization);
    if (key === undefined) {
      key = basicUser(authorization);
      if (authorization.length <= BASIC_HEADER_MAX) {
        if (basicKeys.size >= BASIC_KEYS_MAX) basicKeys.clear();
        basicKeys.set(authorization, key);
      }
    }
    if (key) return { key, from: 'basic' };
  }
  if (typeof body.writeKey === 'string' && body.writeKey !== '') return { key: body.writeKey, from: 'body' };
  return null;
}

/** The user name of a Basic Authorization header; null for another scheme or an empty name. */
function basicUser(authorization: string): string | null {
  if (!/^basic\s+/i.test(authorization)) return null;
  const decoded = Buffer.from(authorization.replace(/^basic\s+/i, '').trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return (colon === -1 ? decoded : decoded.slice(0, colon)) || null;
}
