import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

// The Content-Security-Policy header of the UI in a browser: the desktop window's rules, with
// script-src naming, besides 'self', the hash of each inline script of the built index.html (the
// build inlines the first page's script and puts the same hash in the page's <meta> policy; a
// browser enforces both). Any other inline script stays refused.

const FIXED = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export function uiContentSecurityPolicy(indexHtml: string): string {
  const hashes = [...indexHtml.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => ` 'sha256-${createHash('sha256').update(m[1]).digest('base64')}'`);
  return `${FIXED}; script-src 'self'${hashes.join('')}`;
}

/** The policy for the index.html in `file`, read again when the file changes (a rebuild while serving). */
export function uiPolicyOf(file: string): () => string {
  let seen = -1;
  let policy = uiContentSecurityPolicy('');
  return () => {
    let mtime: number;
    try {
      mtime = statSync(file).mtimeMs;
    } catch {
      return policy;
    }
    if (mtime !== seen) {
      seen = mtime;
      policy = uiContentSecurityPolicy(readFileSync(file, 'utf8'));
    }
    return policy;
  };
}
