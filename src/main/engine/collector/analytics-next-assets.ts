import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The browser SDK the collector serves, from the installed `@segment/analytics-next` package (a
 * dependency pinned to one version): its standalone bundle (what the CDN's analytics.min.js is) and
 * the chunks that bundle loads. Found with require.resolve, so it works from a checkout, the built
 * app and an installed npm package alike. The folder is listed once: only a name in that listing is
 * ever read, so no request path reaches the file system.
 */
export interface AnalyticsNextAssets {
  version: string;
  /** dist/umd/standalone.js with the lab's one-line preamble (see CDN_PREAMBLE). */
  standalone(): Buffer;
  /** A file of dist/umd by its exact name (.js and .js.map only), or undefined. */
  file(name: string): Buffer | undefined;
}

/**
 * analytics.js finds its CDN from its own <script src>, but only an https:// one (parse-cdn.ts:
 * /(https:\/\/.*)\/analytics\.js\/v1\//); for the lab's http:// address it falls back to
 * https://cdn.segment.com and would fetch its settings and chunks from the internet. It also reads
 * the CDN from `_cdn` on the snippet's global object first (getGlobalCDNUrl), so this preamble, run
 * before the bundle, sets that to the origin the script came from, unless the page set one. The page
 * itself stays unpatched.
 */
export const CDN_PREAMBLE =
  '(function(){try{var s=document.currentScript;if(!s||!s.src)return;' +
  "var a=window.analytics=window.analytics||[];if(!a._cdn)a._cdn=new URL(s.src).origin;}catch(e){}})();";

const SERVED = /^[\w.-]+\.js(?:\.map)?$/;

let cached: AnalyticsNextAssets | null | undefined;

/** The assets, or null when the package is not installed (the routes then answer 404 saying so). */
export function analyticsNextAssets(): AnalyticsNextAssets | null {
  if (cached !== undefined) return cached;
  try {
    const req = createRequire(__filename);
    const pkgFile = req.resolve('@segment/analytics-next/package.json');
    const version = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { version: string }).version;
    const dir = join(dirname(pkgFile), 'dist', 'umd');
    const names = new Set(readdirSync(dir).filter((n) => SERVED.test(n)));
    const bytes = new Map<string, Buffer>();
    const read = (name: string) => {
      let b = bytes.get(name);
      if (!b) bytes.set(name, (b = readFileSync(join(dir, name))));
      return b;
    };
    let standalone: Buffer | undefined;
    cached = {
      version,
      // The preamble ends with a newline-free `;` so the bundle's source map (line 1) stays close.
      standalone: () => (standalone ??= Buffer.concat([Buffer.from(CDN_PREAMBLE), read('standalone.js')])),
      file: (name) => (names.has(name) ? read(name) : undefined),
    };
  } catch {
    cached = null;
  }
  return cached;
}
