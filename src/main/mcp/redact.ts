import { maskUrlPasswordsIn, PASSWORD_MASK } from '../../shared/url-credentials';
import { SECRET_PREFIX } from '../../shared/standard-webhooks';

// What the MCP tools answer passes through here once, on its way out (issue 39): it must fit an
// agent's context and keep the lab's secrets. A string over 16 KB (a body as received, a receiver's
// answer) is cut, with a marker saying how much and where the whole call is; the control API token
// never appears; shared secrets, Standard Webhooks secrets, URL passwords and credential headers
// (Authorization, Cookie, a name with auth, token, secret, key, password) are masked unless the
// server was started to show them (stdio with --show-secrets; never over /mcp).

/** The longest string an answer carries whole. */
export const MAX_TEXT_CHARS = 16 * 1024;

/** The object keys whose string values are secrets (a source's webhooks, a probe's input). */
const SECRET_KEYS = new Set(['sharedSecret', 'standardWebhooksSecret', 'secret']);
/** Maps of HTTP headers (a receiver URL's static headers, an attempt's request and answer). */
const HEADER_MAPS = new Set(['headers', 'requestHeaders', 'responseHeaders']);
/** Headers that carry credentials (a receiver's `Authorization: Bearer …`); signatures are not secrets and stay. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie)$|auth|token|secret|key|password|passwd|session|credential/i;
/** A header map in an answer: at most this many entries, each value at most this long (a receiver answering 100 headers, a URL given 20 of 10 KB: found by a review). */
export const MAX_HEADERS = 32;
export const MAX_HEADER_CHARS = 1024;
/** The key of the entry that says how many headers were left out. */
export const MORE_HEADERS = '…';

export interface RedactOptions {
  showSecrets: boolean;
  /** The control API token: replaced wherever it occurs, whatever showSecrets says. */
  token?: string;
  /** Where the whole call can be seen, for the marker of a cut string (a permalink, or how to read it). */
  whereWhole?: string;
}

export function maskSecret(secret: string): string {
  return secret.startsWith(SECRET_PREFIX) ? `${SECRET_PREFIX}${PASSWORD_MASK}` : PASSWORD_MASK;
}

export function cutText(text: string, whereWhole?: string): string {
  if (text.length <= MAX_TEXT_CHARS) return text;
  const more = text.length - MAX_TEXT_CHARS;
  return `${text.slice(0, MAX_TEXT_CHARS)}… [cut: ${more} more characters${whereWhole ? `; the whole of it: ${whereWhole}` : ''}]`;
}

/** A token this short is masked only where it stands alone: masking every "ab" inside words would garble the answer. */
const SHORT_TOKEN = 8;
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function withoutToken(text: string, token: string | undefined): string {
  if (!token) return text;
  if (token.length >= SHORT_TOKEN) return text.split(token).join(PASSWORD_MASK);
  // Not next to a character a token, a header value or a query value could go on with.
  return text.replace(new RegExp(`(?<![A-Za-z0-9._~+/-])${escapeRegExp(token)}(?![A-Za-z0-9._~+/=-])`, 'g'), PASSWORD_MASK);
}

/** A text for people or agents: the token out, URL passwords masked (unless shown), cut at 16 KB. */
export function redactText(text: string, o: RedactOptions): string {
  let out = withoutToken(text, o.token);
  if (!o.showSecrets && out.includes('://')) out = maskUrlPasswordsIn(out);
  return cutText(out, o.whereWhole);
}

/** A copy of `value` with every string redacted (redactText) and every secret-named key masked. */
export function redact<T>(value: T, o: RedactOptions): T {
  const walk = (v: unknown, key: string | undefined, inHeaders: boolean): unknown => {
    if (typeof v === 'string') {
      if (!o.showSecrets && key !== undefined && v !== '' && (SECRET_KEYS.has(key) || (inHeaders && CREDENTIAL_HEADER.test(key)))) return maskSecret(v);
      return redactText(v, o);
    }
    if (Array.isArray(v)) return v.map((item) => walk(item, undefined, false));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      const headers = key !== undefined && HEADER_MAPS.has(key);
      const entries = Object.entries(v);
      for (const [k, item] of headers ? entries.slice(0, MAX_HEADERS) : entries) {
        const value = walk(item, k, headers);
        out[k] = headers && typeof value === 'string' && value.length > MAX_HEADER_CHARS ? `${value.slice(0, MAX_HEADER_CHARS)}… [cut: ${value.length - MAX_HEADER_CHARS} more characters]` : value;
      }
      if (headers && entries.length > MAX_HEADERS) out[MORE_HEADERS] = `${entries.length - MAX_HEADERS} more headers, not shown`;
      return out;
    }
    return v;
  };
  return walk(value, undefined, false) as T;
}
