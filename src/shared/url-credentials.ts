// A receiver URL may carry `user:password@` (README, Decisions: they are sent as HTTP Basic auth, as
// curl and Segment's request client send them). The password is a secret: wherever a URL is shown
// (the UI, exports, `webhook-lab check`, logs, attempts) it goes through maskUrlPassword first.
// Browser-safe: no Buffer.

export const PASSWORD_MASK = '****';

// The scheme and `//`, then the authority's userinfo: everything up to its last `@` before the path
// (WHATWG URL reads a backslash as a slash for http and https, so it ends the authority too).
const USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:[\\/]{2})([^/?#\\]*)@/;

/**
 * The URL as written, with its password (if any) replaced by ****: `https://bob:****@host/hook`.
 * The user name stays (it says which account); everything else is left exactly as given.
 */
export function maskUrlPassword(url: string): string {
  const m = USERINFO.exec(url);
  if (!m) return url;
  const colon = m[2].indexOf(':');
  if (colon === -1 || colon === m[2].length - 1) return url;
  return `${m[1]}${m[2].slice(0, colon)}:${PASSWORD_MASK}@${url.slice(m[0].length)}`;
}

/** Where a URL begins inside a run of text: a scheme and `//`, not preceded by a scheme's own characters. */
const URL_START = /(?<![A-Za-z0-9+.-])(?=[A-Za-z][A-Za-z0-9+.-]*:[\\/]{2})/;

/**
 * Every URL in a piece of text (an error message, a log line) with its password masked. A URL runs to
 * the next space, `"`, `<` or `>`; not to a `'`, which a password may hold (`bob:pa'ss@`: found by a
 * review), and which, closing a quoted URL, is left where it was by maskUrlPassword.
 */
export function maskUrlPasswordsIn(text: string): string {
  // A run may hold two URLs ('http://a/x','http://u:p@b/'): each is masked.
  return text.replace(/[A-Za-z][A-Za-z0-9+.-]*:[\\/]{2}[^\s"<>]*/g, (run) => run.split(URL_START).map(maskUrlPassword).join(''));
}

/** Whether the URL carries a user name or a password. */
export function hasUrlCredentials(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
}

/**
 * `Authorization: Basic …` for a parsed URL's user name and password (percent-decoded, UTF-8, as
 * curl and Node's http `auth` send them), or null when it has neither.
 */
export function basicAuthOf(u: { username: string; password: string }): string | null {
  if (u.username === '' && u.password === '') return null;
  const bytes = new TextEncoder().encode(`${decode(u.username)}:${decode(u.password)}`);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
