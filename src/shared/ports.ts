// The lab's default ports, stated once: the collector's (what SDKs are pointed at) and the control
// API and web UI's. Usage texts and docs say the same numbers; a test holds them to these.

/** The embedded collector (Segment's tracking API). */
export const DEFAULT_COLLECTOR_PORT = 8787;
/** The control API and web UI of `webhook-lab serve` and the desktop app's local API. */
export const DEFAULT_UI_PORT = 8788;
/** The collector's address by default: an SDK's endpoint, the client library's. */
export const DEFAULT_COLLECTOR_URL = `http://127.0.0.1:${DEFAULT_COLLECTOR_PORT}`;
