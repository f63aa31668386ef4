/** Where the write key came from, for the inspector: Basic auth (user name) or the body's writeKey. */
export interface WriteKeyFound {
  key: string;
  from: 'basic' | 'body';
}

/**
 * SPEC §3: HTTP Basic with the key as user name (colon and empty password optional), or `writeKey`
 * in the body. A Bearer header is ignored in favour of the body key (as the real service does).
 */
export function findWriteKey(authorization: string | undefined, body: Record<string, unknown>): WriteKeyFound | null {
  if (authorization && /^basic\s+/i.test(authorization)) {
    const decoded = Buffer.from(authorization.replace(/^basic\s+/i, '').trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const key = colon === -1 ? decoded : decoded.slice(0, colon);
    if (key) return { key, from: 'basic' };
  }
  if (typeof body.writeKey === 'string' && body.writeKey !== '') return { key: body.writeKey, from: 'body' };
  return null;
}
