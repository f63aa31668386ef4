import type { Session } from 'electron';

// The window's Content-Security-Policy. The renderer's index.html carries a <meta> policy too (that
// is the one Chromium applies to the file:// load, which has no response headers); this header
// covers anything served over http(s) — the dev server — and the browser enforces both.
// style-src needs 'unsafe-inline' because CodeMirror and React inject style elements/attributes.

const PROD_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
];

// Vite's dev server needs its inline React Refresh preamble and the HMR websocket.
const DEV_POLICY = PROD_POLICY.map((d) =>
  d.startsWith('script-src') ? "script-src 'self' 'unsafe-inline'" : d.startsWith('connect-src') ? "connect-src 'self' ws: wss:" : d,
);

export function contentSecurityPolicy(dev: boolean): string {
  return (dev ? DEV_POLICY : PROD_POLICY).join('; ');
}

export function installContentSecurityPolicy(session: Session, dev: boolean): void {
  const policy = contentSecurityPolicy(dev);
  session.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...details.responseHeaders };
    // Replace any policy the server sent (header names arrive in any case).
    for (const name of Object.keys(headers)) {
      if (name.toLowerCase() === 'content-security-policy') delete headers[name];
    }
    headers['Content-Security-Policy'] = [policy];
    callback({ responseHeaders: headers });
  });
}

/** Clipboard writes (copy body, copy as cURL) are the only permission the UI uses; everything else is denied. */
const ALLOWED_PERMISSIONS = new Set(['clipboard-sanitized-write']);

export function restrictPermissions(session: Session): void {
  session.setPermissionRequestHandler((_wc, permission, callback) => callback(ALLOWED_PERMISSIONS.has(permission)));
  session.setPermissionCheckHandler((_wc, permission) => ALLOWED_PERMISSIONS.has(permission));
}
